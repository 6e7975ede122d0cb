import { readFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { Server } from 'node:http';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeDiscord, FakeOpenAIServer, FakeSlack, FakeTelegram } from 'colloquy/testing';
import {
  dropTestDatabases,
  postgresReachable,
  testDatabase,
} from '../db/postgres/postgres.fixtures.js';
import {
  type BotRun,
  type CrashCounts,
  compare,
  crashSeed,
  drain,
  everyAddressedAnswered,
  freePort,
  killRepeatedly,
  printCounts,
  scratch,
  seededRandom,
  startBot,
  stopBot,
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
import { readPostgres } from './postgres.js';

// Several instances on one Postgres: real example bots as child processes share a
// database; one of them is SIGKILLed under traffic and not restarted. The others must take up
// its work: every event the platform counts as acknowledged is stored, every addressed one is
// answered once (or recorded unconfirmed), and nothing is answered twice.
//
// Runs the built examples: `npm run build` first.

const LEASE_TTL_MS = 1000;
const TIMEOUT_MS = 120_000;
/**
 * The webhook scenario's load: CRASH_RATE updates a second (60 by default) up to CRASH_UPDATES
 * of them, while one instance is killed CRASH_KILLS times, during the traffic and while the
 * instances work through what it left (CRASH_SEED repeats a run's kill moments). The defaults
 * keep the suite's run short; docs/benchmarks.md gives the heavy run.
 */
const WEBHOOK_RATE = Number(process.env.CRASH_RATE ?? 60);
const WEBHOOK_UPDATES = Number(process.env.CRASH_UPDATES ?? 120);
const WEBHOOK_KILLS = Number(process.env.CRASH_KILLS ?? 3);
/**
 * Sets of five chats the traffic is spread over, about 2 updates a second each: a chat's turns
 * are answered one after another (and Telegram lets a bot post about once a second in a chat).
 */
const WEBHOOK_SETS = Math.max(1, Math.round(WEBHOOK_RATE / 10));
/** The longest the drain after the traffic may take: it ends once every addressed turn is answered. */
const WEBHOOK_DRAIN_MS = Number(process.env.CRASH_DRAIN_MS ?? 180_000);
/**
 * The lease ttl of the webhook scenario: a conversation a killed instance held waits this long;
 * its holder renews each lease every third of it, so under this load a shorter ttl is mostly
 * renewals (and one that lapses on a busy machine has the other instance run a turn's agent
 * again: the reply goes out from the attempt that recorded it first).
 */
const WEBHOOK_LEASE_TTL_MS = Number(process.env.CRASH_LEASE_TTL_MS ?? 3000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let model: FakeOpenAIServer;
beforeAll(async () => {
  // Slow enough that the kill lands in the middle of agent work.
  model = await new FakeOpenAIServer({ latencyMs: 300 }).start();
});
afterAll(async () => {
  await model?.close();
  await dropTestDatabases();
});

function baseEnv(db: string, on = model): Record<string, string> {
  return {
    COLLOQUY_DB: db,
    COLLOQUY_LEASE_TTL_MS: String(LEASE_TTL_MS),
    COLLOQUY_MODEL: 'openai-compatible:fake-model',
    COLLOQUY_MODEL_BASE_URL: on.baseURL,
  };
}

/** The pid of the instance holding lease `name` (holders are `host:pid:random`). */
async function holderPid(url: string, name: string): Promise<number | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ holder: string }>(
      'SELECT holder FROM leases WHERE name = $1 AND expires_at > clock_timestamp()',
      [name],
    );
    const pid = Number(rows[0]?.holder.split(':')[1]);
    return Number.isInteger(pid) ? pid : undefined;
  } finally {
    await client.end();
  }
}

/** Resolves once the process `pid` holds a conversation's lease with a run started in it. */
async function untilAtWork(url: string, pid: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      // A held lease alone is not enough: its run may have finished a moment ago, and a kill
      // then leaves nothing for the other instance to take up.
      const { rowCount } = await client.query(
        `SELECT 1 FROM leases l JOIN agent_runs r ON l.name = 'conversation:' || r.conversation_id
         WHERE l.holder LIKE $1 AND l.expires_at > clock_timestamp() AND r.status = 'running'`,
        [`%:${pid}:%`],
      );
      if ((rowCount ?? 0) > 0) return;
      if (Date.now() > deadline) throw new Error(`process ${pid} never held a conversation`);
      await sleep(10);
    }
  } finally {
    await client.end();
  }
}

/** Runs started more than once (taken up after a kill) or left unconfirmed by one. */
async function takenUp(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM agent_runs WHERE attempts > 1 OR status = 'unconfirmed'`,
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

/**
 * Runs recorded as not answered because a write failed (a deadlock, a lost connection), with
 * their error: a store failure that passes must be retried, never end a run.
 */
async function endedByStoreFailures(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ error: string }>(
      `SELECT error FROM agent_runs
       WHERE status <> 'answered' AND error ~* '40P01|40001|deadlock|cannot store|could not'`,
    );
    return rows.map((row) => row.error);
  } finally {
    await client.end();
  }
}

/**
 * A load balancer on 127.0.0.1: each request goes to the next backend in turn, or to the one
 * after it when that one refuses the connection (an instance that died).
 */
async function roundRobin(ports: number[]): Promise<{ port: number; server: Server }> {
  let next = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const attempt = (tries: number) => {
        const port = ports[next++ % ports.length]!;
        const forward = request(
          { host: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        forward.on('error', () => {
          if (tries + 1 < ports.length && !res.headersSent) attempt(tries + 1);
          else if (!res.headersSent) res.writeHead(502).end();
          else res.destroy();
        });
        forward.end(body);
      };
      attempt(0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

function expectNothingLost(counts: CrashCounts): void {
  expect(counts.acknowledged).toBeGreaterThan(0);
  expect({
    acknowledgedMissing: counts.acknowledgedMissing,
    repliesMissing: counts.repliesMissing,
    repliesWithoutIdNotUnconfirmed: counts.repliesWithoutId - counts.repliesUnconfirmed,
    answeredTwice: counts.answeredTwice,
    unanswered: counts.unanswered,
    finalStop: counts.finalStop.replace(/ after .*/, ''),
  }).toEqual({
    acknowledgedMissing: 0,
    repliesMissing: 0,
    repliesWithoutIdNotUnconfirmed: 0,
    answeredTwice: 0,
    unanswered: 0,
    finalStop: 'exit 0',
  });
}

describe.skipIf(!postgresReachable)('several bot instances on one Postgres', () => {
  it(
    'Slack events spread over two instances: one dies mid-run, the other answers its work',
    async () => {
      const url = await testDatabase();
      const dir = scratch('instances-slack');
      const slack = await FakeSlack.start({
        retries: { delaysMs: [500, 2000, 5000] },
        channels: { C0GENERAL: 'general', C0ORDERS: 'orders', C0HELP: 'help', C0SHOP: 'shop' },
      });
      const ports = [await freePort(), await freePort()];
      const balancer = await roundRobin(ports);
      slack.eventsUrl = `http://127.0.0.1:${balancer.port}/slack/events`;
      const runs: BotRun[] = ports.map((port) =>
        startBot({
          example: 'slack-bot',
          env: {
            ...baseEnv(url),
            SLACK_BOT_TOKEN: slack.token,
            SLACK_SIGNING_SECRET: slack.signingSecret,
            SLACK_API_URL: slack.slackApiUrl,
            PORT: String(port),
          },
          readyLine: /receives events at/,
          logFile: join(dir, 'runs.log'),
        }),
      );
      try {
        expect(await Promise.all(runs.map((run) => run.ready))).toEqual([true, true]);
        const rate = 10;
        const traffic = slackTraffic(slack, rate);
        await sleep(2000);
        // One instance dies while its agents are at work (it holds a conversation's lease).
        await untilAtWork(url, runs[0]!.child.pid!);
        runs[0]!.child.kill('SIGKILL');
        await runs[0]!.exited;
        await sleep(3000);
        await traffic.stop();
        const answeredAll = () => everyAddressedAnswered(slackRecord(slack));
        await drain(answeredAll, () => slack.acknowledged.length + slack.posted.length);
        const finalStop = await stopBot(runs[1]!);
        const counts = compare(slackRecord(slack), await readPostgres(url), {
          path: 'Slack HTTP events, two instances on Postgres',
          rate,
          sent: traffic.sent,
          finalStop,
          kills: { kills: 1, beforeReady: 0, unexpectedExits: [] },
        });
        const taken = await takenUp(url);
        printCounts(counts, 0, `runs taken up after the kill: ${taken}; runs' output: ${dir}`);
        expectNothingLost(counts);
        expect(taken).toBeGreaterThan(0);
      } finally {
        for (const run of runs) run.child.kill('SIGKILL');
        balancer.server.close();
        await slack.close();
      }
    },
    TIMEOUT_MS,
  );

  it(
    'Telegram long polling: the poller is killed, the standby takes over, nothing acknowledged is lost',
    async () => {
      const url = await testDatabase();
      const dir = scratch('instances-telegram');
      const telegram = await FakeTelegram.start();
      const setup = {
        example: 'telegram-bot',
        env: {
          ...baseEnv(url),
          TELEGRAM_BOT_TOKEN: telegram.token,
          TELEGRAM_API_ROOT: telegram.apiRoot,
        },
        readyLine: /is polling for updates/,
        logFile: join(dir, 'runs.log'),
      };
      const runs = [startBot(setup), startBot(setup)];
      try {
        expect(await Promise.all(runs.map((run) => run.ready))).toEqual([true, true]);
        const rate = 10;
        const traffic = telegramTraffic(telegram, rate);
        await sleep(3000);
        // The poller dies; the other instance stood by and must take over within the ttl.
        const poller = `telegram-poller:${telegram.botInfo.id}`;
        const pid = await holderPid(url, poller);
        const leader = runs.find((run) => run.child.pid === pid);
        expect(leader).toBeDefined();
        leader!.child.kill('SIGKILL');
        await leader!.exited;
        await sleep(3000);
        await traffic.stop();
        const standby = runs.find((run) => run !== leader)!;
        expect(await holderPid(url, poller)).toBe(standby.child.pid);
        const answeredAll = () => everyAddressedAnswered(telegramRecord(telegram));
        // Until every update is acknowledged and answered (a run the dead poller held is
        // taken up once its lease expires).
        await drain(
          () => telegram.acknowledged.length >= traffic.sent && answeredAll(),
          () => telegram.acknowledged.length + telegram.sent.length,
        );
        const finalStop = await stopBot(standby);
        const counts = compare(telegramRecord(telegram), await readPostgres(url), {
          path: 'Telegram long polling, two instances on Postgres',
          rate,
          sent: traffic.sent,
          finalStop,
          kills: { kills: 1, beforeReady: 0, unexpectedExits: [] },
        });
        printCounts(counts, 0, `409 conflicts: ${telegram.conflicts}; runs' output: ${dir}`);
        expectNothingLost(counts);
        expect(counts.acknowledged).toBe(traffic.sent);
      } finally {
        for (const run of runs) run.child.kill('SIGKILL');
        await telegram.close();
      }
    },
    TIMEOUT_MS,
  );

  it(
    'Discord: the instance on both shards is killed, the standby RESUMEs each session, nothing delivered is lost',
    async () => {
      const url = await testDatabase();
      const dir = scratch('instances-discord');
      const discord = await FakeDiscord.start({ shards: 2 });
      discordScene(discord);
      const setup = {
        example: 'discord-bot',
        env: {
          ...baseEnv(url),
          DISCORD_BOT_TOKEN: discord.token,
          DISCORD_API_URL: discord.restApi,
          DISCORD_SHARDS: '2',
        },
        readyLine: /is connected to Discord|share the Discord gateway/,
        logFile: join(dir, 'runs.log'),
      };
      // One after the other, so the first holds the gateway.
      const runs = [startBot(setup)];
      try {
        expect(await runs[0]!.ready).toBe(true);
        // The first holds both shards before the second starts.
        for (let waited = 0; discord.identifies.length < 2 && waited < 30_000; waited += 20) {
          await sleep(20);
        }
        runs.push(startBot(setup));
        expect(await runs[1]!.ready).toBe(true);
        const rate = 10;
        const traffic = discordTraffic(discord, rate);
        await sleep(3000);
        runs[0]!.child.kill('SIGKILL');
        await runs[0]!.exited;
        await sleep(3000);
        await traffic.stop();
        const answeredAll = () => everyAddressedAnswered(discordRecord(discord));
        await drain(answeredAll, () => discord.delivered.length + discord.posted.length);
        const finalStop = await stopBot(runs[1]!);
        const counts = compare(discordRecord(discord), await readPostgres(url), {
          path: 'Discord gateway, two instances on Postgres',
          rate,
          sent: traffic.sent,
          finalStop,
          kills: { kills: 1, beforeReady: 0, unexpectedExits: [] },
        });
        printCounts(
          counts,
          0,
          `${discord.identifies.length} sessions identified, ${discord.resumes} RESUMEs; runs' output: ${dir}`,
        );
        expectNothingLost(counts);
        // The standby went on with each session the dead instance kept in the database.
        expect(discord.identifies.map((identify) => identify.shard).sort()).toEqual([
          [0, 2],
          [1, 2],
        ]);
        expect(discord.resumes).toBeGreaterThanOrEqual(2);
      } finally {
        for (const run of runs) run.child.kill('SIGKILL');
        await discord.close();
      }
    },
    TIMEOUT_MS,
  );
  it(
    'Telegram webhooks behind a load balancer: one instance killed and restarted again and again, every addressed turn answered',
    async () => {
      const seed = crashSeed();
      const url = await testDatabase();
      const dir = scratch('instances-telegram-webhook');
      // A quick model, so that two instances keep up with the traffic between kills.
      const quick = await new FakeOpenAIServer({ latencyMs: 50 }).start();
      const telegram = await FakeTelegram.start({ webhookDelivery: { retryMs: 200 } });
      const ports = [await freePort(), await freePort()];
      const balancer = await roundRobin(ports);
      const logFile = join(dir, 'runs.log');
      const setup = (port: number) => ({
        example: 'telegram-bot',
        env: {
          ...baseEnv(url, quick),
          COLLOQUY_LEASE_TTL_MS: String(WEBHOOK_LEASE_TTL_MS),
          TELEGRAM_BOT_TOKEN: telegram.token,
          TELEGRAM_API_ROOT: telegram.apiRoot,
          TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${balancer.port}/telegram`,
          TELEGRAM_WEBHOOK_SECRET: 'crash-test-secret',
          PORT: String(port),
        },
        readyLine: /receives updates at/,
        logFile,
      });
      const steady = startBot(setup(ports[1]!));
      let last: BotRun | undefined;
      try {
        expect(await steady.ready).toBe(true);
        const traffic = telegramTraffic(telegram, WEBHOOK_RATE, WEBHOOK_SETS);
        const sent = (async () => {
          while (traffic.sent < WEBHOOK_UPDATES) await sleep(20);
          await traffic.stop();
        })();
        // One instance dies at random moments and comes back; the other serves throughout.
        const killed = await killRepeatedly(setup(ports[0]!), {
          kills: WEBHOOK_KILLS,
          afterReadyMs: [500, 2000],
          duringStartMs: [100, 1500],
          random: seededRandom(seed),
        });
        last = killed.last;
        await sent;
        const answeredAll = () => everyAddressedAnswered(telegramRecord(telegram));
        await drain(
          () => telegram.acknowledged.length >= traffic.sent && answeredAll(),
          () => telegram.acknowledged.length + telegram.sent.length,
          // Quiet for longer than a lease a killed instance held takes to expire and be swept.
          { maxMs: WEBHOOK_DRAIN_MS, quietMs: 3 * WEBHOOK_LEASE_TTL_MS },
        );
        const stops = [await stopBot(last), await stopBot(steady)];
        const counts = compare(telegramRecord(telegram), await readPostgres(url), {
          path: 'Telegram webhook, two instances on Postgres behind a load balancer',
          rate: WEBHOOK_RATE,
          sent: traffic.sent,
          finalStop: stops.find((stop) => stop !== 'exit 0') ?? 'exit 0',
          kills: killed.report,
        });
        const log = readFileSync(logFile, 'utf8').split('\n');
        const deadlocks = log.filter((line) => /40P01|deadlock detected/.test(line));
        // Capture logs an error only for a write it gives up on (refused for good, unwritten).
        const givenUp = log.filter((line) => / ERROR capture: /.test(line));
        printCounts(
          counts,
          seed,
          `deadlocks in the logs: ${deadlocks.length}; writes given up: ${givenUp.length}; runs' output: ${dir}`,
        );
        expectNothingLost(counts);
        expect(counts.kills).toBe(WEBHOOK_KILLS);
        // Every deadlock or lost connection was retried: no write given up, no run ended by one.
        expect(givenUp).toEqual([]);
        expect(await endedByStoreFailures(url)).toEqual([]);
      } finally {
        steady.child.kill('SIGKILL');
        last?.child.kill('SIGKILL');
        balancer.server.close();
        await telegram.close();
        await quick.close();
      }
    },
    TIMEOUT_MS + WEBHOOK_KILLS * 20_000 + WEBHOOK_DRAIN_MS,
  );
});
