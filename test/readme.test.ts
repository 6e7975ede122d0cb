import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FULL_SUITE_ONLY } from '../vitest.config.js';
import { buildIfStale } from './channels/console/bot.fixtures.js';
import { dropPrefix, closeTestClient, redisUrl, uniquePrefix } from './db/redis/redis.fixtures.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const scratch = `${root}.vitest-tmp/readme`;
const run = promisify(execFile);

/** The first ```ts block after a README heading. */
async function snippet(heading: string): Promise<string> {
  const readme = await readFile(`${root}README.md`, 'utf8');
  const section = readme.slice(readme.indexOf(`## ${heading}`));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  if (!match?.[1]) throw new Error(`no ts block under "${heading}" in README.md`);
  return match[1];
}

/** Every ```ts block of the README, in order. */
async function allSnippets(): Promise<string[]> {
  const readme = await readFile(`${root}README.md`, 'utf8');
  return [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
}

describe('the README', () => {
  beforeAll(() => buildIfStale(), 180_000);
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  it("compiles every TypeScript snippet under the project's strict settings, against the built package", async () => {
    // Given each snippet as a file of its own, and a tsconfig with the project's compiler
    // options that resolves `colloquy` as an installed package does (to dist/ declarations)
    const snippets = await allSnippets();
    expect(snippets.length).toBeGreaterThanOrEqual(4);
    const dir = `${scratch}/snippets`;
    await mkdir(dir, { recursive: true });
    await Promise.all(
      snippets.map((code, i) => writeFile(`${dir}/snippet-${i + 1}.ts`, `${code}\nexport {};\n`)),
    );
    await writeFile(
      `${dir}/tsconfig.json`,
      JSON.stringify({
        extends: '../../../tsconfig.json',
        compilerOptions: { noEmit: true, incremental: false, rootDir: '.', paths: {} },
        include: ['*.ts'],
      }),
    );

    // When tsc checks them
    const result = await run(
      process.execPath,
      [`${root}node_modules/typescript/bin/tsc`, '-p', `${dir}/tsconfig.json`],
      { cwd: root, timeout: 120_000 },
    ).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );

    // Then none has an error (noUncheckedIndexedAccess, noImplicitOverride and strict included)
    expect(result).toBe('');
  }, 120_000);

  it('says what to install for the agent snippet, and shows colloquy/console and bot.catch()', async () => {
    const readme = await readFile(`${root}README.md`, 'utf8');
    const agents = readme.slice(readme.indexOf('## Agents'));
    expect(agents.slice(0, agents.indexOf('```ts'))).toContain('npm install ai @ai-sdk/openai');
    expect(readme).toMatch(/import \{ ConsoleChannel \} from 'colloquy\/console'/);
    expect(readme).toContain('bot.catch(');
  });

  it('shows an offline test of its first bot that really runs', async () => {
    // Given the "Testing your bot offline" code, as it stands
    const program = await snippet('Testing your bot offline');
    await mkdir(scratch, { recursive: true });
    await writeFile(`${scratch}/offline.mts`, program);

    // When it runs as a user would run it, with no model configured
    const env = { ...process.env, COLLOQUY_MODEL: '' };
    const { stdout } = await run('node', ['--import', 'tsx', `${scratch}/offline.mts`], {
      cwd: root,
      env,
      timeout: 90_000,
    });

    // Then the offline model answered through the fake Telegram and both turns were stored
    expect(stdout).toContain('[offline model]');
    expect(stdout).toContain("content: 'where is my order?'");
  }, 120_000);

  it.skipIf(redisUrl === undefined)(
    'shows a Redis store that really runs',
    async () => {
      // Given the "Conversations in Redis" code, on a key prefix of its own
      const prefix = uniquePrefix();
      const program = (await snippet('Conversations in Redis')).replace(
        "'support-bot:'",
        `'${prefix}'`,
      );
      await mkdir(scratch, { recursive: true });
      await writeFile(`${scratch}/redis.mts`, program);

      // When it runs against the test Redis
      try {
        const env = { ...process.env, REDIS_URL: redisUrl };
        const { stdout } = await run('node', ['--import', 'tsx', `${scratch}/redis.mts`], {
          cwd: root,
          env,
          timeout: 90_000,
        });
        // Then the search found the turn it stored
        expect(stdout.trim()).toBe('Where is my refund?');
      } finally {
        await dropPrefix(prefix);
        await closeTestClient();
      }
    },
    120_000,
  );
});

describe('the numbers the README gives', () => {
  it('counts the lines of the bot its heading promises', async () => {
    // Given the heading "A bot in N lines" and the code under it
    const readme = await readFile(`${root}README.md`, 'utf8');
    const promised = /^## A bot in (\d+) lines$/m.exec(readme)?.[1];
    const code = await snippet(`A bot in ${promised} lines`);

    // Then the code has that many lines, blank ones included
    expect(code.trimEnd().split('\n')).toHaveLength(Number(promised));
  });

  it("counts docs/sql.md's example queries", async () => {
    // Given the number the README gives and the "Example queries" section of docs/sql.md
    const readme = await readFile(`${root}README.md`, 'utf8');
    const said = /the id formats and (\d+) example queries/.exec(readme)?.[1];
    const docs = await readFile(`${root}docs/sql.md`, 'utf8');
    const section = docs.slice(docs.indexOf('\n## Example queries\n') + 1);
    const end = section.slice(1).search(/^## /m);
    const examples = end === -1 ? section : section.slice(0, end + 1);

    // Then it is the number of SQL blocks there, each a query a test runs
    expect(docs).toContain('\n## Example queries\n');
    expect(said).toBeDefined();
    expect([...examples.matchAll(/^```sql$/gm)]).toHaveLength(Number(said));
  });

  it('names every suite npm run test:quick leaves out, and test:quick is the quick mode', async () => {
    // Given the README's section on working on colloquy and the scripts in package.json
    const readme = await readFile(`${root}README.md`, 'utf8');
    const working = readme.slice(readme.indexOf('\n## Working on colloquy\n'));
    const { scripts } = JSON.parse(await readFile(`${root}package.json`, 'utf8')) as {
      scripts: Record<string, string>;
    };

    // Then test:quick runs vitest in the mode that leaves FULL_SUITE_ONLY out
    expect(scripts['test:quick']).toMatch(/vitest run --mode quick$/);
    // and the README names each of those suites (a folder by its name, without the glob)
    for (const suite of FULL_SUITE_ONLY) {
      expect(working).toContain(`\`${suite.replace(/\*\*$/, '')}\``);
    }
  });
});
