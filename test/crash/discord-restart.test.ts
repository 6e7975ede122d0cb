/**
 * A Discord bot killed right after a gateway RECONNECT that replays events, then restarted,
 * must connect again every time. People write to the running example bot; every other time
 * they then fall quiet until the bot has handed over all Discord sent. The fake tells the bot
 * to reconnect (op 7) and to replay the last events it had already received; within a second,
 * while the bot RESUMEs or handles the replay, it is SIGKILLed; the next process RESUMEs the
 * session it kept in the store (with nothing newer to replay, after a quiet moment) and must
 * print that it is connected.
 *
 * Runs the built examples: `npm run build` first. DISCORD_RESTARTS=<n> sets how many restarts:
 * 10 by default, since each takes about 8 s on a busy machine and the suite has its time
 * budget; docs/benchmarks.md gives a run of 100. CRASH_SEED=<n> repeats a run's kill moments.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeDiscord, FakeOpenAIServer } from 'colloquy/testing';
import {
  crashSeed,
  scratch,
  seededRandom,
  startBot,
  stopBot,
  type BotRun,
  type CrashSetup,
} from './harness.js';
import { discordScene, discordTraffic } from './platforms.js';

const RESTARTS = Number(process.env.DISCORD_RESTARTS ?? 10);
const RATE = 20;
/** How many events the fake replays after the RECONNECT, besides what the bot missed. */
const REPLAY = 20;
/** How long a quiet bot gets to hand over everything Discord sent before the RECONNECT. */
const CATCH_UP_MS = 10_000;
const QUIET_MS = 500;
/**
 * How long a start may take before it counts as hung: past the bot's own start bound (60 s
 * by default), after which a start that cannot connect exits saying why.
 */
const HUNG_AFTER_MS = 75_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let model: FakeOpenAIServer;
let discord: FakeDiscord;
beforeAll(async () => {
  model = await new FakeOpenAIServer({ latencyMs: 50 }).start();
  discord = await FakeDiscord.start();
  discordScene(discord);
});
afterAll(async () => {
  await discord?.close();
  await model?.close();
});

/**
 * Resolves once the session the bot keeps in `file` has reached the last event Discord sent,
 * and nothing more was sent for `QUIET_MS` (its replies' echoes included), or `CATCH_UP_MS`
 * passed: a restart then RESUMEs with nothing newer to replay.
 */
async function caughtUp(file: string): Promise<void> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const kept = db.prepare("SELECT value FROM colloquy_state WHERE key = 'discord:gateway:0'");
  const sequence = () => {
    const row = kept.get() as { value: string } | undefined;
    return row && (JSON.parse(row.value) as { session: { sequence: number } }).session.sequence;
  };
  try {
    const until = Date.now() + CATCH_UP_MS;
    let newest = discord.delivered.at(-1)?.s;
    let since = Date.now();
    while (Date.now() < until) {
      if (discord.delivered.at(-1)?.s !== newest) {
        newest = discord.delivered.at(-1)?.s;
        since = Date.now();
      }
      if (sequence() === newest && Date.now() - since >= QUIET_MS) return;
      await sleep(50);
    }
  } finally {
    db.close();
  }
}

/** How one start ended: connected, exited (it could not start), or still starting. */
async function started(run: BotRun): Promise<'connected' | 'hung' | 'exited'> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), HUNG_AFTER_MS);
  });
  const ready = run.ready.then((ok) => (ok ? ('connected' as const) : ('exited' as const)));
  try {
    return await Promise.race([ready, hung]);
  } finally {
    clearTimeout(timer);
  }
}

describe('Discord gateway: a bot killed after a RECONNECT with replayed events', () => {
  it(
    'connects again on every restart, RESUMEing the session it kept',
    async () => {
      // Given the example bot
      const seed = crashSeed();
      const random = seededRandom(seed);
      const dir = scratch('discord-restart');
      const setup: CrashSetup = {
        example: 'discord-bot',
        env: {
          COLLOQUY_DB: join(dir, 'colloquy.db'),
          COLLOQUY_MODEL: 'openai-compatible:fake-model',
          COLLOQUY_MODEL_BASE_URL: model.baseURL,
          DISCORD_BOT_TOKEN: discord.token,
          DISCORD_API_URL: discord.restApi,
        },
        readyLine: /is connected to Discord/,
        logFile: join(dir, 'runs.log'),
      };
      const outcomes = { connected: 0, hung: 0, exited: 0 };
      let run = startBot(setup);
      try {
        for (let restart = 0; restart <= RESTARTS; restart++) {
          // When it has started (or not), and the last start is not followed by a kill
          const outcome = await started(run);
          outcomes[outcome]++;
          if (restart === RESTARTS) break;
          // then people write for a while; every other time they fall quiet and the bot
          // catches up, so the next RESUME has nothing newer to replay
          const traffic = discordTraffic(discord, RATE);
          await sleep(250 + random() * 750);
          if (restart % 2 === 0) {
            await traffic.stop();
            await caughtUp(setup.env.COLLOQUY_DB!);
          }
          // and Discord asks it to reconnect and replays, and it is killed within a second
          void discord.forceReconnect({ replayLast: REPLAY });
          await sleep(random() * 1000);
          await traffic.stop();
          run.child.kill('SIGKILL');
          await run.exited;
          run = startBot(setup);
        }
      } finally {
        await stopBot(run);
      }
      const summary =
        `${RESTARTS} restarts after a RECONNECT replaying ${REPLAY} events, at ${RATE}/s: ` +
        `of ${RESTARTS + 1} starts ${outcomes.connected} connected, ${outcomes.hung} hung, ` +
        `${outcomes.exited} exited; ` +
        `${discord.identifies.length} sessions identified, ${discord.resumes} RESUMEs; ` +
        `seed ${seed}; runs' output: ${setup.logFile}`;
      console.log(summary);

      // Then every start connected
      expect(outcomes, summary).toEqual({ connected: RESTARTS + 1, hung: 0, exited: 0 });
    },
    (RESTARTS + 1) * (HUNG_AFTER_MS + 5000),
  );
});
