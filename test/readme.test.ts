import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { dropPrefix, closeTestClient, redisUrl, uniquePrefix } from './redis.fixtures.js';

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

describe('the README', () => {
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  it('shows an offline test of the ten-line bot that really runs', async () => {
    // Given the agent class from "A bot in ten lines" and the "Testing your bot offline" code
    const tenLines = await snippet('A bot in ten lines');
    const agent = /class SupportAgent[\s\S]*?\n}\n/.exec(tenLines)?.[0];
    expect(agent).toBeDefined();
    const offline = await snippet('Testing your bot offline');
    const program = offline.replace(
      "import { TelegramChannel } from 'colloquy/telegram';\n",
      `import { TelegramChannel } from 'colloquy/telegram';\nimport { BaseAgent } from 'colloquy';\n${agent}`,
    );
    await mkdir(scratch, { recursive: true });
    await writeFile(`${scratch}/offline.mts`, program);

    // When it runs as a user would run it, with no model configured
    const env = { ...process.env, COLLOQUY_MODEL: '' };
    const { stdout } = await run('node', ['--import', 'tsx', `${scratch}/offline.mts`], {
      cwd: root,
      env,
      timeout: 30_000,
    });

    // Then the offline model answered through the fake Telegram and both turns were stored
    expect(stdout).toContain('[offline model]');
    expect(stdout).toContain("content: 'where is my order?'");
  });

  it.skipIf(redisUrl === undefined)('shows a Redis store that really runs', async () => {
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
        timeout: 30_000,
      });
      // Then the search found the turn it stored
      expect(stdout.trim()).toBe('Where is my refund?');
    } finally {
      await dropPrefix(prefix);
      await closeTestClient();
    }
  });
});
