/**
 * Run from the built dist (`npm run build` first). A bot that only posts, for the crash test of posts: on Discord (or Telegram) against a fake,
 * on a SQLite file, it keeps posting into one conversation, each post now or a moment later,
 * until it is killed or told to stop (SIGTERM). `POSTS_RUN` names the run: its posts say
 * `post <run>-<n>`. Prints `ready` once started.
 */
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { Bot } from '../../dist/index.js';
import { DiscordChannel } from '../../dist/channels/discord/index.js';
import { TelegramChannel } from '../../dist/channels/telegram/index.js';
import { SqliteConversationStore } from '../../dist/db/sqlite/index.js';

const env = process.env;
const channel =
  env.POSTS_PLATFORM === 'telegram'
    ? new TelegramChannel({
        token: env.TELEGRAM_TOKEN,
        client: { apiRoot: env.TELEGRAM_API_ROOT },
        pollingTimeoutSeconds: 1,
      })
    : new DiscordChannel({
        token: env.DISCORD_TOKEN,
        clientOptions: { rest: { api: env.DISCORD_API_URL } },
      });
const store = new SqliteConversationStore({ path: env.COLLOQUY_DB });
const bot = new Bot({ channels: [channel], agents: [], store, logger: quietLogger() });
bot.catch((error) => void process.stderr.write(`${error.name}: ${error.message}\n`));
bot.installSignalHandlers();
await bot.start();
process.stdout.write('ready\n');

const conversation = env.POSTS_CONVERSATION;
let n = 0;
let stopping = false;
process.once('SIGTERM', () => (stopping = true));
while (!stopping && env.POSTS_SEND !== '0') {
  n++;
  const text = `post ${env.POSTS_RUN}-${n}`;
  // Every third post is due a moment later: some come due while the bot is down.
  const at = n % 3 === 0 ? new Date(Date.now() + 200 + ((n * 137) % 1300)) : undefined;
  await bot.send(conversation, text, at === undefined ? {} : { at }).catch(() => undefined);
  await sleep(20);
}

function quietLogger() {
  const line = (message) => void process.stderr.write(`${message}\n`);
  return { debug: () => {}, info: () => {}, warn: line, error: line };
}
