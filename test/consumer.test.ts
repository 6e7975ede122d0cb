import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale } from './channels/console/bot.fixtures.js';
import { tempDirs } from './fixtures/temp-dirs.js';

/**
 * The README's Install section followed in a fresh project, offline: colloquy packed with
 * `npm pack` and unpacked into the project's node_modules as npm installs a tarball, the other
 * packages the section installs (and colloquy's dependencies) linked from this checkout's
 * node_modules, the README's bots type-checked, and its console bot run with `npx tsx bot.ts`.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);
const temp = tempDirs();

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const install = readme.slice(
  readme.indexOf('## Install\n'),
  readme.indexOf('\n## ', readme.indexOf('## Install\n')),
);
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  dependencies: Record<string, string>;
};

/** The ```lang blocks of a piece of markdown, in order. */
function blocks(markdown: string, lang: string): string[] {
  return [...markdown.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
    (match) => match[1] ?? '',
  );
}

/** The package names of `npm install a b@2 @scope/c@1` commands (flags and paths left out). */
function installed(text: string): string[] {
  const names: string[] = [];
  for (const [, args] of text.matchAll(/npm install ([^`#\n]+)/g)) {
    for (const arg of (args ?? '').trim().split(/\s+/)) {
      if (arg.startsWith('-') || arg.includes('/') !== arg.startsWith('@')) continue;
      names.push(arg.replace(/(.)@.*$/, '$1'));
    }
  }
  return names;
}

/** `name` in the project's node_modules, as this checkout's copy of it. */
function link(project: string, name: string): void {
  const to = join(project, 'node_modules', name);
  if (existsSync(to)) return;
  mkdirSync(dirname(to), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules', name), to);
}

let project: string;

beforeAll(async () => {
  buildIfStale();
  project = temp.make('consumer');

  // colloquy as npm installs its tarball: the packed files alone, in node_modules/colloquy
  const { stdout } = await run(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', project],
    { cwd: ROOT, timeout: 120_000 },
  );
  const [packed] = JSON.parse(stdout) as { filename: string }[];
  mkdirSync(join(project, 'node_modules'));
  await run('tar', ['-xzf', join(project, packed!.filename), '-C', join(project, 'node_modules')]);
  renameSync(join(project, 'node_modules/package'), join(project, 'node_modules/colloquy'));

  // what the README installs, and colloquy's dependencies, from this checkout
  for (const name of [...Object.keys(pkg.dependencies), ...installed(install)]) {
    if (existsSync(join(ROOT, 'node_modules', name))) link(project, name);
  }
  mkdirSync(join(project, 'node_modules/.bin'));
  symlinkSync('../tsx/dist/cli.mjs', join(project, 'node_modules/.bin/tsx'));
  symlinkSync('../typescript/bin/tsc', join(project, 'node_modules/.bin/tsc'));

  // the README's package.json type, tsconfig and bots
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-bot', type: 'module' }));
  writeFileSync(join(project, 'tsconfig.json'), blocks(install, 'json')[0] ?? '');
  const bots = blocks(readme.slice(readme.indexOf('## A bot in ')), 'ts');
  writeFileSync(join(project, 'telegram.ts'), bots[0] ?? '');
  writeFileSync(join(project, 'bot.ts'), bots[1] ?? '');
}, 180_000);

/** `npx …` in the project, without the network; its output whether or not it failed. */
async function npx(args: string[], input?: string): Promise<{ code: number; output: string }> {
  const env = { ...process.env, npm_config_offline: 'true', COLLOQUY_MODEL: '' };
  const child = execFile('npx', args, { cwd: project, env, timeout: 240_000 });
  child.stdin?.end(input ?? '');
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
  return { code, output };
}

describe("the README's Install section, in a project of one's own", () => {
  it('installs the tarball that npm pack writes, as an ES module project', () => {
    expect(install).toContain(`npm install ../colloquy/${pkg.name}-${pkg.version}.tgz`);
    expect(install).toContain('npm pkg set type=module');
    expect(installed(install)).toEqual(
      expect.arrayContaining(['typescript', 'tsx', '@types/node']),
    );
  });

  it('type-checks the README bots with its tsconfig (npx tsc)', async () => {
    const { code, output } = await npx(['tsc']);
    expect(output).toBe('');
    expect(code).toBe(0);
  }, 240_000);

  it("type-checks them with every library's declarations too (skipLibCheck: false) and no ambient types (types: [])", async () => {
    // Given the README's tsconfig, checking declarations, with only the types colloquy's bring
    const tsconfig = JSON.parse(blocks(install, 'json')[0] ?? '{}') as {
      compilerOptions: Record<string, unknown>;
    };
    Object.assign(tsconfig.compilerOptions, { skipLibCheck: false, types: [] });
    writeFileSync(join(project, 'tsconfig.strict.json'), JSON.stringify(tsconfig));

    // When tsc checks the bots
    const { output } = await npx(['tsc', '-p', 'tsconfig.strict.json']);

    // Then nothing is wrong in colloquy's declarations or the bots; another library's missing
    // types are only those the README says to install for this setting
    const errors = output.split('\n').filter((line) => / error TS\d+:/.test(line));
    const unnamed = errors.filter((line) => {
      const missing =
        /^(?:.*\/)?node_modules\/(?!colloquy\/)[^(]+\(\d+,\d+\): error TS7016: .*module '([^']+)'/.exec(
          line,
        );
      return !(missing && install.includes(`@types/${missing[1]}`));
    });
    expect(unnamed).toEqual([]);
  }, 240_000);

  it('runs the console bot with npx tsx bot.ts, capturing into ./colloquy.db', async () => {
    expect(install).toContain('`npx tsx bot.ts`');
    const { code, output } = await npx(['tsx', 'bot.ts'], 'hello\n');
    expect(output).toContain('[offline model]');
    expect(code).toBe(0);
    expect(existsSync(join(project, 'colloquy.db'))).toBe(true);
  }, 120_000);
});
