import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { tempDirs } from '../../fixtures/temp-dirs.js';
import { buildIfStale, until } from '../../channels/console/bot.fixtures.js';
import { BIN } from './cli-harness.js';

beforeAll(() => buildIfStale(), 180_000);
const temp = tempDirs();

const offline = (heard: string) =>
  `[offline model] I heard: "${heard}" — set COLLOQUY_MODEL to use a real model.`;

/** `colloquy try <platform>` as a child process, the test typing at its prompt. */
function tryPlatform(platform: string, db: string) {
  const child = spawn(process.execPath, [BIN, 'try', platform], {
    env: { ...process.env, COLLOQUY_DB: db, COLLOQUY_MODEL: '', COLLOQUY_USER_NAME: 'Ada' },
    stdio: 'pipe',
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const lines = () => stdout.split('\n');
  return {
    child,
    exited,
    stderr: () => stderr,
    lines,
    /** Types `text` and resolves once a line saying `shown` is printed. */
    async type(text: string, shown: string): Promise<void> {
      child.stdin.write(`${text}\n`);
      await until(() => lines().includes(shown), 30_000);
    },
  };
}

describe('colloquy try', () => {
  it('talks to the example Telegram bot on a fake Telegram: in a DM, and in a group when mentioned or replied to', async () => {
    // given `colloquy try telegram`, once the bot listens
    const db = join(temp.make('try'), 'try.db');
    const session = tryPlatform('telegram', db);
    try {
      await until(() => session.lines().some((line) => line.includes('is listening')), 60_000);

      // when the person writes in the DM, then the bot answers there
      await session.type(
        'hello',
        `[dm] @colloquy_try_bot ↳ replying to "hello": ${offline('Ada: hello')}`,
      );

      // when the person moves to the group and writes without and then with a mention
      await session.type('/group', 'now in the group "colloquy try"');
      session.child.stdin.write('nobody asked the bot\n');
      const mention = '@colloquy_try_bot where is order 42?';
      await session.type(
        mention,
        `[group] @colloquy_try_bot ↳ replying to "${mention}": ${offline(`Ada: ${mention}`)}`,
      );

      // and replies to the bot's answer, a thread of it
      await session.type(
        '/reply and 43?',
        `[group] @colloquy_try_bot ↳ replying to "and 43?": ${offline('Ada: and 43?')}`,
      );
      session.child.stdin.end();
      expect(await session.exited).toBe(0);

      // then the bot answered the mention and the reply in the group, not the line between
      const group = session.lines().filter((line) => line.startsWith('[group]'));
      expect(group).toHaveLength(2);

      // and every turn is captured in the database, the group's under its chat
      const store = SqliteConversationStore.open(db);
      try {
        const groupTurns = await store.get('telegram:-1001234567890');
        expect(groupTurns.map((turn) => turn.content)).toEqual([
          'nobody asked the bot',
          mention,
          offline(`Ada: ${mention}`),
          'and 43?',
          offline('Ada: and 43?'),
        ]);
      } finally {
        await store.close();
      }
    } finally {
      session.child.kill('SIGKILL');
    }
  });

  it('refuses a platform it has no fake for in one line', async () => {
    const session = tryPlatform('myspace', join(temp.make('try'), 'try.db'));
    expect(await session.exited).toBe(1);
    expect(session.stderr()).toBe(
      'colloquy: no fake platform "myspace" to try; one of: telegram\n',
    );
  });
});
