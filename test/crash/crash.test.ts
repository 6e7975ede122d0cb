import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FakeDiscord,
  FakeOpenAIServer,
  FakeSlack,
  FakeTelegram,
  type SteadyTraffic,
} from 'colloquy/testing';
import {
  compare,
  crashSeed,
  drain,
  everyAddressedAnswered,
  freePort,
  killRepeatedly,
  printCounts,
  readStore,
  scratch,
  seededRandom,
  stopBot,
  type CrashCounts,
  type CrashSetup,
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

// Nothing acknowledged is ever lost: a real example bot runs as a child process against a
// loopback fake under steady traffic and is SIGKILLed at random moments, ten times, restarted
// each time; the last run drains and stops. Then the SQLite file must hold every turn the
// platform counts as acknowledged and the text of every reply the platform received, no turn may
// be answered twice, and every addressed turn is answered or its run recorded unconfirmed,
// expired, or given up after maxRunAttempts interrupted starts. On Slack and Discord the fake
// holds its answer to each post a moment after creating the message, so some kills land between
// the platform call and its confirmation: the restart settles those replies exactly (found by
// message metadata, a Slack stream the crash left running by its thread, or sent again with
// the same nonce), so every reply is recorded with its
// platform id. Telegram offers neither: a reply cut off there is recorded unconfirmed (at most
// once).
//
// Runs the built examples: `npm run build` first. CRASH_SEED=<n> repeats a run's kill moments;
// CRASH_KILLS and CRASH_RATE change the load; CRASH_REPORT=<file> appends the table rows there.

const KILLS = Number(process.env.CRASH_KILLS ?? 10);
/** Most kills land this long after a run is ready; one in five this long after it is spawned. */
const AFTER_READY_MS: [number, number] = [0, 2000];
const DURING_START_MS: [number, number] = [100, 1500];
/** How long the model takes to answer: long enough that kills land in the middle of agent work. */
const MODEL_LATENCY_MS = 50;
/** How long the Slack and Discord fakes hold the answer to a post after creating the message. */
const ANSWER_DELAY_MS: [number, number] = [0, 300];
const TIMEOUT_MS = 300_000;

let model: FakeOpenAIServer;
beforeAll(async () => {
  model = await new FakeOpenAIServer({ latencyMs: MODEL_LATENCY_MS }).start();
});
afterAll(async () => {
  await model?.close();
});

/** The environment every example run gets: its database and the fake model. */
function baseEnv(dir: string): Record<string, string> {
  return {
    COLLOQUY_DB: join(dir, 'colloquy.db'),
    COLLOQUY_MODEL: 'openai-compatible:fake-model',
    COLLOQUY_MODEL_BASE_URL: model.baseURL,
  };
}

/**
 * One crash scenario: traffic starts, the bot is killed `KILLS` times and started again, the
 * last run drains, the traffic stops and the bot stops; then the fake's record is compared with
 * the database.
 */
async function crashScenario(options: {
  path: string;
  rate: number;
  setup: (dir: string) => CrashSetup;
  traffic: () => SteadyTraffic;
  record: () => PlatformRecord;
  /** True once the platform has nothing left to deliver, given how many events were sent. */
  delivered?: (sent: number) => boolean;
  /** More to print about the run (RESUMEs, retries…). */
  notes?: () => string;
  /** Whether the platform holds the answer to a post it created (see `killRepeatedly`). */
  between?: () => boolean;
}): Promise<CrashCounts> {
  const seed = crashSeed();
  const dir = scratch(options.path.replace(/\W+/g, '-'));
  const setup = options.setup(dir);
  const traffic = options.traffic();
  const { last, report } = await killRepeatedly(setup, {
    kills: KILLS,
    afterReadyMs: AFTER_READY_MS,
    duringStartMs: DURING_START_MS,
    random: seededRandom(seed),
    ...(options.between !== undefined && { between: options.between }),
  });
  await traffic.stop();
  const answeredAll = () => everyAddressedAnswered(options.record());
  const drainStarted = Date.now();
  await drain(
    () => (options.delivered?.(traffic.sent) ?? true) && answeredAll(),
    () => {
      const { acknowledged, replies } = options.record();
      return acknowledged.length + replies.length;
    },
  );
  const drainMs = Date.now() - drainStarted;
  const finalStop = await stopBot(last);
  const counts = compare(options.record(), readStore(setup.env.COLLOQUY_DB as string), {
    path: options.path,
    rate: options.rate,
    sent: traffic.sent,
    finalStop: `${finalStop} after a ${(drainMs / 1000).toFixed(1)} s drain`,
    kills: report,
  });
  printCounts(counts, seed, options.notes?.());
  console.log(`(database and the runs' output, kept if the test fails: ${dir})`);
  return counts;
}

/**
 * The guarantee, asserted on the counts (all at once, so a failure shows every figure). With
 * `exact` (a platform where a reply can be found again) no reply lacks its platform id and no
 * run is left unconfirmed; without, every reply that lacks its id is recorded unconfirmed.
 */
function expectNothingLost(counts: CrashCounts, exact: boolean): void {
  expect(counts.kills).toBeGreaterThanOrEqual(Math.min(KILLS, 10));
  expect(counts.acknowledged).toBeGreaterThan(0);
  expect({
    acknowledgedMissing: counts.acknowledgedMissing,
    repliesMissing: counts.repliesMissing,
    repliesWithoutId: exact
      ? counts.repliesWithoutId
      : counts.repliesWithoutId - counts.repliesUnconfirmed,
    runsUnconfirmed: exact ? counts.runsUnconfirmed : 0,
    answeredTwice: counts.answeredTwice,
    unanswered: counts.unanswered,
    unexpectedExits: counts.unexpectedExits,
    finalStop: counts.finalStop.replace(/ after .*/, ''),
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
  // The fake held its answers long enough that kills landed between a call and its answer.
  if (exact) expect(counts.killsBetweenCallAndAnswer).toBeGreaterThan(0);
}

describe('Telegram: a bot killed at random moments loses nothing acknowledged', () => {
  it(
    'by long polling',
    async () => {
      const rate = Number(process.env.CRASH_RATE ?? 10);
      const telegram = await FakeTelegram.start();
      try {
        const counts = await crashScenario({
          path: 'Telegram long polling',
          rate,
          setup: (dir) => ({
            example: 'telegram-bot',
            env: {
              ...baseEnv(dir),
              TELEGRAM_BOT_TOKEN: telegram.token,
              TELEGRAM_API_ROOT: telegram.apiRoot,
            },
            readyLine: /is polling for updates/,
            logFile: join(dir, 'runs.log'),
          }),
          traffic: () => telegramTraffic(telegram, rate),
          delivered: (sent) => telegram.acknowledged.length >= sent,
          record: () => telegramRecord(telegram),
        });
        expectNothingLost(counts, false);
      } finally {
        await telegram.close();
      }
    },
    TIMEOUT_MS,
  );

  it(
    'by webhook',
    async () => {
      const rate = Number(process.env.CRASH_RATE ?? 10);
      const telegram = await FakeTelegram.start({ webhookDelivery: { retryMs: 200 } });
      const port = await freePort();
      try {
        const counts = await crashScenario({
          path: 'Telegram webhook',
          rate,
          setup: (dir) => ({
            example: 'telegram-bot',
            env: {
              ...baseEnv(dir),
              TELEGRAM_BOT_TOKEN: telegram.token,
              TELEGRAM_API_ROOT: telegram.apiRoot,
              TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${port}/telegram`,
              TELEGRAM_WEBHOOK_SECRET: 'crash-test-secret',
              PORT: String(port),
            },
            readyLine: /receives updates at/,
            logFile: join(dir, 'runs.log'),
          }),
          traffic: () => telegramTraffic(telegram, rate),
          delivered: (sent) => telegram.acknowledged.length >= sent,
          record: () => telegramRecord(telegram),
        });
        expectNothingLost(counts, false);
      } finally {
        await telegram.close();
      }
    },
    TIMEOUT_MS,
  );
});

describe('Slack HTTP events: a bot killed at random moments loses nothing acknowledged', () => {
  it(
    'with Slack retrying what was not acknowledged',
    async () => {
      const rate = Number(process.env.CRASH_RATE ?? 10);
      // Replies in threads are streamed with Slack's own methods; the fake holds its answer to
      // chat.startStream as to chat.postMessage, so kills land before the bot learns the ts.
      const slack = await FakeSlack.start({
        retries: { delaysMs: [500, 2000, 5000] },
        answerDelayMs: ANSWER_DELAY_MS,
        channels: { C0GENERAL: 'general', C0ORDERS: 'orders', C0HELP: 'help', C0SHOP: 'shop' },
      });
      const port = await freePort();
      slack.eventsUrl = `http://127.0.0.1:${port}/slack/events`;
      try {
        const counts = await crashScenario({
          path: 'Slack HTTP events',
          rate,
          setup: (dir) => ({
            example: 'slack-bot',
            env: {
              ...baseEnv(dir),
              SLACK_BOT_TOKEN: slack.token,
              SLACK_SIGNING_SECRET: slack.signingSecret,
              SLACK_API_URL: slack.slackApiUrl,
              PORT: String(port),
            },
            readyLine: /receives events at/,
            logFile: join(dir, 'runs.log'),
          }),
          // Every other post mentions the bot (Slack then sends `message` and `app_mention`).
          traffic: () => slackTraffic(slack, rate),
          record: () => slackRecord(slack),
          notes: () =>
            `${slack.calls.filter((call) => call.method === 'chat.startStream').length} streams started`,
          between: () => slack.answersHeld > 0,
        });
        expectNothingLost(counts, true);
      } finally {
        await slack.close();
      }
    },
    TIMEOUT_MS,
  );
});

describe('Discord gateway: a bot killed at random moments loses nothing delivered', () => {
  it(
    'RESUMEing the session it kept, so Discord replays what arrived while it was down',
    async () => {
      const rate = Number(process.env.CRASH_RATE ?? 10);
      const discord = await FakeDiscord.start({ answerDelayMs: ANSWER_DELAY_MS });
      discordScene(discord);
      try {
        const counts = await crashScenario({
          path: 'Discord gateway',
          rate,
          setup: (dir) => ({
            example: 'discord-bot',
            env: {
              ...baseEnv(dir),
              DISCORD_BOT_TOKEN: discord.token,
              DISCORD_API_URL: discord.restApi,
            },
            readyLine: /is connected to Discord/,
            logFile: join(dir, 'runs.log'),
          }),
          // Two DMs (always addressed) and three channels where every other post mentions the bot.
          traffic: () => discordTraffic(discord, rate),
          record: () => discordRecord(discord),
          notes: () =>
            `${discord.identifies.length} sessions identified, ${discord.resumes} RESUMEs`,
          between: () => discord.answersHeld > 0,
        });
        expectNothingLost(counts, true);
      } finally {
        await discord.close();
      }
    },
    TIMEOUT_MS,
  );
});
