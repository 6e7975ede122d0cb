import { execFile } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIfStale } from './channels/console/bot.fixtures.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

/**
 * A small project laid out like colloquy (tsconfig.json, examples/console-bot.ts, the real
 * examples/start.mjs, colloquy's node_modules), so the start script builds something quick.
 */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-start-'));
  mkdirSync(join(dir, 'examples'));
  copyFileSync(join(ROOT, 'examples/start.mjs'), join(dir, 'examples/start.mjs'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        rootDir: '.',
        outDir: 'dist',
        incremental: true,
        types: [],
      },
      include: ['examples'],
    }),
  );
  writeFileSync(join(dir, 'examples/console-bot.ts'), "console.log('the bot runs');\n");
  return dir;
}

async function start(dir: string): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, ['examples/start.mjs'], { cwd: dir, timeout: 120_000 });
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('npm start', () => {
  it('runs the start script, which builds only what changed', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.start).toBe('node examples/start.mjs');
    expect(pkg.scripts.build).toBe('tsc -b tsconfig.json');
  });

  it('says it is building on the first start, goes straight to the bot on the next, and builds again after a change', async () => {
    // Given a fresh checkout, never built
    const dir = project();
    dirs.push(dir);

    // When it starts the first time, then it says it builds, and the bot runs
    const first = await start(dir);
    expect(first.stderr).toMatch(/^colloquy: building \(no build yet; [^\n]*\ncolloquy: built in /);
    expect(first.stdout).toBe('the bot runs\n');

    // When it starts again with nothing changed, then the bot runs without a build
    const second = await start(dir);
    expect(second.stderr).toBe('');
    expect(second.stdout).toBe('the bot runs\n');

    // When a source changes, then the next start builds it, and the one after does not
    const [older, old] = [new Date(Date.now() - 20_000), new Date(Date.now() - 10_000)];
    utimesSync(join(dir, 'tsconfig.json'), older, older);
    utimesSync(join(dir, 'dist/tsconfig.tsbuildinfo'), old, old);
    writeFileSync(join(dir, 'examples/console-bot.ts'), "console.log('the bot runs, changed');\n");
    const third = await start(dir);
    expect(third.stderr).toMatch(/^colloquy: building \(examples\/console-bot\.ts changed; /);
    expect(third.stdout).toBe('the bot runs, changed\n');
    const fourth = await start(dir);
    expect(fourth.stderr).toBe('');
  }, 120_000);

  it('answers piped input from the built package without building it again', async () => {
    // Given colloquy built (as npm ci's prepare leaves it)
    buildIfStale();
    const db = join(mkdtempSync(join(tmpdir(), 'colloquy-start-db-')), 'chat.db');
    dirs.push(db.slice(0, -'/chat.db'.length));

    // When `npm start --silent` reads two piped lines
    const child = execFile('npm', ['start', '--silent'], {
      cwd: ROOT,
      env: { ...process.env, COLLOQUY_DB: db, COLLOQUY_MODEL: '', COLLOQUY_USER_NAME: 'Ada' },
      timeout: 60_000,
    });
    child.stdin?.end('hello\nwhere is my order?\n');
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += String(chunk)));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += String(chunk)));
    const code = await new Promise((resolve) => child.on('close', resolve));

    // Then it answered both without a build
    expect(code).toBe(0);
    expect(stderr).not.toContain('building');
    expect(stdout).toContain('I heard: "Ada: where is my order?"');
  }, 60_000);
});
