import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { FakeOpenAIServer } from 'colloquy/testing';

const root = fileURLToPath(new URL('..', import.meta.url));
const scratch = `${root}.vitest-tmp/readme-stores`;
const run = promisify(execFile);

/** Runs the first ```ts block under a README heading as a user would; its output. */
async function runSnippet(heading: string, env: Record<string, string> = {}): Promise<string> {
  const readme = await readFile(`${root}README.md`, 'utf8');
  const section = readme.slice(readme.search(new RegExp(`^#{2,3} ${heading}$`, 'm')));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (code === undefined) throw new Error(`no ts block under "${heading}" in README.md`);
  await mkdir(scratch, { recursive: true });
  const path = `${scratch}/${heading.toLowerCase().replace(/\W+/g, '-')}.mts`;
  await writeFile(path, code);
  const { stdout } = await run('node', ['--import', 'tsx', path], {
    cwd: root,
    env: { ...process.env, COLLOQUY_MODEL: '', ...env },
    timeout: 30_000,
  });
  return stdout;
}

describe('the README sections on conversations and provenance', () => {
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  it('Conversations you manage: creates, retitles and reads a conversation', async () => {
    const out = await runSnippet('Conversations you manage');
    expect(out).toBe("Refund for order 42 (done) { ticket: 42, priority: 'high' } 0\n");
  });

  it('Where an answer came from: the reply carries the response id and the tool’s source', async () => {
    // given a model server that has the agent look something up, then answer
    const server = await new FakeOpenAIServer().start();
    try {
      server.reply(
        { toolCalls: [{ id: 'call_1', name: 'lookup', arguments: { query: 'refund' } }] },
        'Refunds take five working days.',
      );
      // when the snippet runs against it
      const out = await runSnippet('Where an answer came from', {
        COLLOQUY_MODEL: 'openai-compatible:fake',
        COLLOQUY_MODEL_BASE_URL: server.baseURL,
      });
      // then it printed the reply's trace id and sources
      expect(out).toContain('chatcmpl-fake [');
      expect(out).toContain("documentId: 'kb/refunds.md'");
      expect(out).toContain('score: 0.82');
    } finally {
      await server.close();
    }
  });
});
