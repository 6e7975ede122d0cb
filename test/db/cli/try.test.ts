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
/** The fake Discord's bot, as its mention is written and as the person sees it. */
const DISCORD_BOT = '<@1100000000000000001>';
const named = (text: string) => text.replaceAll(DISCORD_BOT, '@colloquy');

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
    /** Writes a line without waiting for anything to be shown. */
    write: (text: string) => void child.stdin.write(`${text}\n`),
    /** Types `text` and resolves once a line saying `shown` is printed. */
    async type(text: string, shown: string): Promise<void> {
      child.stdin.write(`${text}\n`);
      await until(() => lines().includes(shown), 30_000);
    },
  };
}

type TrySession = ReturnType<typeof tryPlatform>;

/**
 * Runs `colloquy try <platform>`, lets `talk` type once the bot listens, then ends the input
 * (Ctrl-D) and expects a clean exit. Resolves with the lines printed and the turns captured
 * in each conversation asked for.
 */
async function talkOn(
  platform: string,
  talk: (session: TrySession) => Promise<void>,
  conversations: string[],
) {
  const db = join(temp.make('try'), 'try.db');
  const session = tryPlatform(platform, db);
  try {
    await until(() => session.lines().some((line) => line.includes('is listening')), 60_000);
    await talk(session);
    session.child.stdin.end();
    expect(await session.exited).toBe(0);
  } finally {
    session.child.kill('SIGKILL');
  }
  const store = SqliteConversationStore.open(db);
  try {
    const turns: string[][] = [];
    for (const id of conversations) turns.push((await store.get(id)).map((turn) => turn.content));
    return { lines: session.lines(), turns };
  } finally {
    await store.close();
  }
}

/** A session starts three processes (the CLI, the fake platform, the bot): slow on a loaded machine. */
const SESSION_MS = 120_000;

describe.concurrent('colloquy try', () => {
  it(
    'talks to the example Telegram bot on a fake Telegram: in a DM, and in a group when mentioned or replied to',
    async () => {
      const mention = '@colloquy_try_bot where is order 42?';
      const { lines, turns } = await talkOn(
        'telegram',
        async (session) => {
          // when the person writes in the DM, then the bot answers there
          await session.type(
            'hello',
            `[dm] @colloquy_try_bot ↳ replying to "hello": ${offline('Ada: hello')}`,
          );
          // when the person moves to the group and writes without and then with a mention
          await session.type('/group', 'now in the group "colloquy try"');
          session.write('nobody asked the bot');
          await session.type(
            mention,
            `[group] @colloquy_try_bot ↳ replying to "${mention}": ${offline(`Ada: ${mention}`)}`,
          );
          // and replies to the bot's answer, a thread of it
          await session.type(
            '/reply and 43?',
            `[group] @colloquy_try_bot ↳ replying to "and 43?": ${offline('Ada: and 43?')}`,
          );
        },
        ['telegram:-1001234567890'],
      );

      // then the bot answered the mention and the reply in the group, not the line between
      expect(lines.filter((line) => line.startsWith('[group]'))).toHaveLength(2);
      // and every turn is captured in the database, the group's under its chat
      expect(turns).toEqual([
        [
          'nobody asked the bot',
          mention,
          offline(`Ada: ${mention}`),
          'and 43?',
          offline('Ada: and 43?'),
        ],
      ]);
    },
    SESSION_MS,
  );

  it(
    'talks to the example Slack bot on a fake Slack: in a DM, and in a channel in the thread of a mention',
    async () => {
      const mention = '@colloquy where is order 42?';
      const thread = `[#general] @colloquy ↳ in the thread of "${mention}"`;
      const { lines, turns } = await talkOn(
        'slack',
        async (session) => {
          // when the person writes in the DM, then the bot answers there, at top level
          await session.type('hello', `[dm] @colloquy: ${offline('Ada: hello')}`);
          // when the person moves to #general and writes without and then with a mention
          await session.type('/channel', 'now in the channel #general');
          session.write('nobody asked the bot');
          await session.type(mention, `${thread}: ${offline(`Ada: ${mention}`)}`);
          // and follows up in the thread the bot opened, without a mention
          await session.type('/reply and 43?', `${thread}: ${offline('Ada: and 43?')}`);
        },
        ['slack:T0FAKE:C0GENERAL'],
      );

      // then the bot answered the mention and the follow-up, both in the thread
      expect(lines.filter((line) => line.startsWith('[#general]'))).toHaveLength(2);
      // and the channel keeps what was said in it (the thread keeps the replies)
      expect(turns).toEqual([['nobody asked the bot', mention]]);
    },
    SESSION_MS,
  );

  it(
    'talks to the example Discord bot on a fake Discord: in a DM, and on a server when mentioned or replied to, in a channel or a thread',
    async () => {
      const mention = '@colloquy where is order 42?';
      const heard = offline(`Ada: ${DISCORD_BOT} where is order 42?`);
      const inThread = offline(`Ada: ${DISCORD_BOT} and in here?`);
      const { lines, turns } = await talkOn(
        'discord',
        async (session) => {
          // when the person writes in the DM, then the bot answers there
          await session.type(
            'hello',
            `[dm] @colloquy ↳ replying to "hello": ${offline('Ada: hello')}`,
          );
          // when the person moves to the server's #general and writes without and then with a mention
          await session.type('/server', 'now in #general on the server "colloquy try"');
          session.write('nobody asked the bot');
          await session.type(
            mention,
            `[#general] @colloquy ↳ replying to "${mention}": ${named(heard)}`,
          );
          // and replies to the bot's answer, then mentions it in a thread
          await session.type(
            '/reply and 43?',
            `[#general] @colloquy ↳ replying to "and 43?": ${offline('Ada: and 43?')}`,
          );
          await session.type('/thread', 'now in the thread "questions" of #general');
          await session.type(
            '@colloquy and in here?',
            `[#general › questions] @colloquy ↳ replying to "@colloquy and in here?": ${named(inThread)}`,
          );
        },
        [
          'discord:1300000000000000001:1300000000000000003',
          'discord:1300000000000000001:1300000000000000003:1300000000000000004',
        ],
      );

      // then the bot answered the mention and the reply in #general, not the line between
      expect(lines.filter((line) => line.startsWith('[#general]'))).toHaveLength(2);
      // and every turn is captured, the thread's under its own conversation
      expect(turns).toEqual([
        [
          'nobody asked the bot',
          `${DISCORD_BOT} where is order 42?`,
          heard,
          'and 43?',
          offline('Ada: and 43?'),
        ],
        [`${DISCORD_BOT} and in here?`, inThread],
      ]);
    },
    SESSION_MS,
  );

  it(
    "shows the bot's text with its control characters escaped, never acting on them",
    async () => {
      // given a line that would retitle the terminal and ring its bell if printed as it is
      const hostile = 'hi \u001b]0;pwned\u0007';
      const shown = 'hi \\e]0;pwned\\a';
      const { lines } = await talkOn(
        'telegram',
        async (session) => {
          // when the person writes it in the DM, then the bot's echo of it is shown escaped
          await session.type(
            hostile,
            `[dm] @colloquy_try_bot ↳ replying to "${shown}": ${offline(`Ada: ${shown}`)}`,
          );
        },
        [],
      );
      // and no line holds the raw escape or bell
      expect(lines.filter((line) => line.includes('\u001b') || line.includes('\u0007'))).toEqual(
        [],
      );
    },
    SESSION_MS,
  );

  it('refuses a platform it has no fake for in one line', async () => {
    const session = tryPlatform('myspace', join(temp.make('try'), 'try.db'));
    expect(await session.exited).toBe(1);
    expect(session.stderr()).toBe(
      'colloquy: no fake platform "myspace" to try; one of: telegram, slack, discord\n',
    );
  });
});
