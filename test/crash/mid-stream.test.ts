import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FakeDiscord,
  FakeOpenAIServer,
  FakeSlack,
  FakeTelegram,
  type FakeChatRequest,
  type SteadyTraffic,
} from 'colloquy/testing';
import {
  compare,
  crashSeed,
  drain,
  everyAddressedAnswered,
  freePort,
  printCounts,
  readStore,
  scratch,
  seededRandom,
  startBot,
  stopBot,
  type BotRun,
  type CrashSetup,
  type KillReport,
  type PlatformRecord,
} from './harness.js';
import {
  discordRecord,
  discordScene,
  discordTraffic,
  slackRecord,
  slackTraffic,
  telegramRecord,
  telegramTraffic,
} from './platforms.js';

// A reply cut off while it is shown: the model writes each answer word by word (a third of a
// second), and each run of an example bot is SIGKILLed a random moment into an answer being
// streamed, then started again. Afterwards nothing acknowledged is missing from the record, no
// turn is answered twice, every reply on the platform is in the record with at least the text
// shown (the text of each edit is recorded before the edit is sent), and every addressed turn is
// answered or its run recorded as not answered. On Slack and Discord every reply is recorded
// with its platform id (a Slack stream left running is stopped at the recorded text; a Discord
// post is found again by its nonce); on Telegram a reply cut off is recorded unconfirmed (a
// draft is never kept, an edited message's id may be lost).
//
// Runs the built examples: `npm run build` first. CRASH_SEED=<n> repeats a run's kill moments.

const KILLS = Number(process.env.MID_STREAM_KILLS ?? 2);
const RATE = 2;
/** Each answer is 14 words, one every 30 ms. */
const WORD_MS = 30;
/** How far into an answer being written the kill lands. */
const INTO_ANSWER_MS: [number, number] = [30, 350];
const TIMEOUT_MS = 120_000;

/** The answer to a post: its `q<n>` token first (how a reply is matched to the post), then words. */
function answer(request: FakeChatRequest): string {
  const token = /\bq\d+\b/.exec(JSON.stringify(request.messages.at(-1)))?.[0] ?? 'q';
  return `${token} is on its way: the parcel left this morning and arrives tomorrow before noon.`;
}

let model: FakeOpenAIServer;
beforeAll(async () => {
  model = await new FakeOpenAIServer({ wordMs: WORD_MS, fallback: answer }).start();
});
afterAll(async () => {
  await model?.close();
});

/**
 * Starts the bot and kills it `KILLS` times, each a random moment into an answer the model is
 * writing (so into a reply being shown), starting it again after each; then once more.
 */
async function killMidStream(
  setup: CrashSetup,
  random: () => number,
): Promise<{ last: BotRun; report: KillReport; midStream: number }> {
  const report: KillReport = { kills: 0, beforeReady: 0, unexpectedExits: [] };
  let midStream = 0;
  for (let i = 0; i < KILLS; i++) {
    const run = startBot(setup);
    const writing = (async () => {
      if (!(await run.ready)) return;
      while (model.writing === 0) await sleep(5);
      const [min, max] = INTO_ANSWER_MS;
      await sleep(min + random() * (max - min));
    })();
    const ended = await Promise.race([writing.then(() => undefined), run.exited]);
    if (ended !== undefined) {
      report.unexpectedExits.push(ended.signal ?? `exit ${ended.code}`);
      continue;
    }
    if (model.writing > 0) midStream++;
    run.child.kill('SIGKILL');
    await run.exited;
    report.kills++;
  }
  const last = startBot(setup);
  if (!(await last.ready)) throw new Error(`the last run did not start; see ${setup.logFile}`);
  return { last, report, midStream };
}

/** Traffic starts, the bot is killed mid-stream `KILLS` times, drains and stops; the counts. */
async function midStreamScenario(options: {
  path: string;
  setup: (dir: string, env: Record<string, string>) => CrashSetup;
  traffic: () => SteadyTraffic;
  record: () => PlatformRecord;
  /** True when a reply can be found again after a crash (Slack, Discord). */
  exact: boolean;
}): Promise<void> {
  const seed = crashSeed();
  const dir = scratch(options.path.replace(/\W+/g, '-'));
  const setup = options.setup(dir, {
    COLLOQUY_DB: join(dir, 'colloquy.db'),
    COLLOQUY_MODEL: 'openai-compatible:fake-model',
    COLLOQUY_MODEL_BASE_URL: model.baseURL,
  });
  const traffic = options.traffic();
  const { last, report, midStream } = await killMidStream(setup, seededRandom(seed));
  await traffic.stop();
  await drain(
    () => everyAddressedAnswered(options.record()) && model.writing === 0,
    () => options.record().replies.length + model.requests.length,
    { quietMs: 10_000 },
  );
  const finalStop = await stopBot(last);
  const counts = compare(options.record(), readStore(setup.env.COLLOQUY_DB as string), {
    path: `${options.path}, killed mid-stream`,
    rate: RATE,
    sent: traffic.sent,
    finalStop,
    kills: report,
  });
  printCounts(counts, seed, `${midStream} kills while an answer was being written`);
  console.log(`(database and the runs' output, kept if the test fails: ${dir})`);
  expect(counts.kills).toBe(KILLS);
  expect(midStream).toBeGreaterThan(0);
  expect({
    acknowledgedMissing: counts.acknowledgedMissing,
    repliesMissing: counts.repliesMissing,
    repliesWithoutId: options.exact
      ? counts.repliesWithoutId
      : counts.repliesWithoutId - counts.repliesUnconfirmed,
    runsUnconfirmed: options.exact ? counts.runsUnconfirmed : 0,
    answeredTwice: counts.answeredTwice,
    unanswered: counts.unanswered,
    unexpectedExits: counts.unexpectedExits,
    finalStop: counts.finalStop,
  }).toEqual({
    acknowledgedMissing: 0,
    repliesMissing: 0,
    repliesWithoutId: 0,
    runsUnconfirmed: 0,
    answeredTwice: 0,
    unanswered: 0,
    unexpectedExits: [],
    finalStop: 'exit 0',
  });
}

describe('a bot killed while a reply is being streamed answers nothing twice and loses nothing', () => {
  it(
    'on Telegram (drafts in private chats, edits in groups)',
    async () => {
      const telegram = await FakeTelegram.start();
      try {
        await midStreamScenario({
          path: 'Telegram long polling',
          setup: (dir, env) => ({
            example: 'telegram-bot',
            env: {
              ...env,
              TELEGRAM_BOT_TOKEN: telegram.token,
              TELEGRAM_API_ROOT: telegram.apiRoot,
            },
            readyLine: /is polling for updates/,
            logFile: join(dir, 'runs.log'),
          }),
          traffic: () => telegramTraffic(telegram, RATE),
          record: () => telegramRecord(telegram),
          exact: false,
        });
      } finally {
        await telegram.close();
      }
    },
    TIMEOUT_MS,
  );

  it(
    'on Discord (posted, then edited)',
    async () => {
      const discord = await FakeDiscord.start();
      discordScene(discord);
      try {
        await midStreamScenario({
          path: 'Discord gateway',
          setup: (dir, env) => ({
            example: 'discord-bot',
            env: { ...env, DISCORD_BOT_TOKEN: discord.token, DISCORD_API_URL: discord.restApi },
            readyLine: /is connected to Discord/,
            logFile: join(dir, 'runs.log'),
          }),
          traffic: () => discordTraffic(discord, RATE),
          record: () => discordRecord(discord),
          exact: true,
        });
      } finally {
        await discord.close();
      }
    },
    TIMEOUT_MS,
  );

  it(
    'on Slack (Slack’s own streaming in threads)',
    async () => {
      const slack = await FakeSlack.start({
        retries: { delaysMs: [500, 2000, 5000] },
        channels: { C0GENERAL: 'general', C0ORDERS: 'orders', C0HELP: 'help', C0SHOP: 'shop' },
      });
      const port = await freePort();
      slack.eventsUrl = `http://127.0.0.1:${port}/slack/events`;
      try {
        await midStreamScenario({
          path: 'Slack HTTP events',
          setup: (dir, env) => ({
            example: 'slack-bot',
            env: {
              ...env,
              SLACK_BOT_TOKEN: slack.token,
              SLACK_SIGNING_SECRET: slack.signingSecret,
              SLACK_API_URL: slack.slackApiUrl,
              PORT: String(port),
            },
            readyLine: /receives events at/,
            logFile: join(dir, 'runs.log'),
          }),
          traffic: () => slackTraffic(slack, RATE),
          record: () => slackRecord(slack),
          exact: true,
        });
      } finally {
        await slack.close();
      }
    },
    TIMEOUT_MS,
  );
});
