import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const scratch = `${root}.vitest-tmp/readme-history`;
const run = promisify(execFile);

/** Writes the first ```ts block under a README heading to a file; returns its path. */
async function writeSnippet(heading: string): Promise<string> {
  const readme = await readFile(`${root}README.md`, 'utf8');
  const section = readme.slice(readme.search(new RegExp(`^#{2,3} ${heading}$`, 'm')));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (code === undefined) throw new Error(`no ts block under "${heading}" in README.md`);
  await mkdir(scratch, { recursive: true });
  const path = `${scratch}/${heading.toLowerCase().replace(/\W+/g, '-')}.mts`;
  await writeFile(path, code);
  return path;
}

/** Runs the first ```ts block under a README heading as a user would; returns its output. */
async function runSnippet(heading: string): Promise<string> {
  const path = await writeSnippet(heading);
  const env = { ...process.env, COLLOQUY_MODEL: '' };
  const { stdout } = await run('node', ['--import', 'tsx', path], {
    cwd: root,
    env,
    timeout: 30_000,
  });
  return stdout;
}

describe('the README sections on history', () => {
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  it('History: the snippet runs and shows a live, copyable conversation', async () => {
    const out = await runSnippet('History');
    expect(out.split('\n')).toEqual([
      'entries: 4',
      'true It shipped yesterday.',
      expect.stringMatching(/^\{"status":"shipped"\} \d+$/),
      '4',
      'entries: 0',
      '',
    ]);
  });

  it('Plugins: the snippet runs, redacting, summarising and keeping the stored text', async () => {
    const out = await runSnippet('Plugins on prompt assembly');
    expect(out).toContain('My card is [card]\n');
    expect(out).toContain("'Summary of earlier conversation: 2 earlier turns about an order.',");
    expect(out).toContain("'Where is order 42?',\n  'It shipped yesterday.'\n]");
    expect(out).toContain('3 My card is 4111111111111111\n');
  });

  it('Delegation: the snippet runs, and the task is stored with who delegated it', async () => {
    const out = await runSnippet('Delegation between agents');
    expect(out).toBe('true\nplanner -> hotels: Find a hotel: two nights in Lyon\n');
  });

  it("compiles these snippets under the project's strict tsconfig", async () => {
    for (const heading of ['History', 'Plugins on prompt assembly', 'Delegation between agents']) {
      await writeSnippet(heading);
    }
    const config = {
      extends: '../../tsconfig.json',
      compilerOptions: { noEmit: true, rootDir: '../..' },
      include: ['*.mts'],
    };
    await writeFile(`${scratch}/tsconfig.json`, JSON.stringify(config));
    const tsc = `${root}node_modules/typescript/bin/tsc`;
    await expect(
      run('node', [tsc, '-p', `${scratch}/tsconfig.json`], { cwd: root, timeout: 120_000 }),
    ).resolves.toBeDefined();
  }, 120_000);
});
