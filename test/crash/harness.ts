/**
 * The crash harness: runs a built example bot (dist/examples) as a child process against the
 * loopback fakes, SIGKILLs it at random moments under traffic, restarts it, lets the last run
 * drain, and compares what the fake acknowledged and received with the SQLite file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { onTestFinished } from 'vitest';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A child process running an example bot. */
export interface BotRun {
  child: ChildProcess;
  /** Resolves when the bot printed its "started" line; never rejects. */
  ready: Promise<boolean>;
  /** Resolves with how it ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Settings shared by every run of one crash scenario. */
export interface CrashSetup {
  /** `telegram-bot`, `slack-bot`… (run from dist/examples). */
  example: string;
  env: Record<string, string>;
  /** The line the example prints once it has started. */
  readyLine: RegExp;
  /** Where the runs' output goes. */
  logFile: string;
}

/**
 * A scratch directory for the running test's database and log: removed when the test
 * passes, kept for a look when it fails (the test prints where).
 */
export function scratch(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `colloquy-crash-${name}-`));
  onTestFinished(({ task }) => {
    if (task.result?.state !== 'fail') rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** A TCP port free right now on 127.0.0.1 (the bot listens on it again after each restart). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The built example, or an error that says to build first. */
export function builtExample(example: string): string {
  const file = join(ROOT, 'dist', 'examples', `${example}.js`);
  if (!existsSync(file)) {
    throw new Error(
      `${file} is missing: the crash tests run the built examples; run npm run build`,
    );
  }
  return file;
}

const runs = new Map<string, number>();

/**
 * Starts one run of the example, with `CRASH_NODE_ARGS` (space-separated) before it: a profile
 * of each run, say (`--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
export function startBot(setup: CrashSetup): BotRun {
  const nodeArgs = process.env.CRASH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, builtExample(setup.example)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...setup.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run = (runs.get(setup.logFile) ?? 0) + 1;
  runs.set(setup.logFile, run);
  appendFileSync(
    setup.logFile,
    `\n--- run ${run} (pid ${child.pid}) ${new Date().toISOString()}\n`,
  );
  let output = '';
  const ready = new Promise<boolean>((resolve) => {
    const onData = (chunk: Buffer) => {
      appendFileSync(setup.logFile, chunk);
      output += chunk.toString('utf8');
      if (setup.readyLine.test(output)) resolve(true);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', () => resolve(false));
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      appendFileSync(setup.logFile, `--- run ${run} ended: ${signal ?? `exit ${code}`}\n`);
      resolve({ code, signal });
    }),
  );
  return { child, ready, exited };
}

/** A small seeded generator (mulberry32), so a failing run can be repeated with its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How much longer than its moment a kill waits for a held answer before it lands anyway. */
const HELD_WAIT_MS = 5000;

/** Resolves once `condition()` holds (looked at every few ms), or after `maxMs`. */
async function until(condition: () => boolean, maxMs: number): Promise<void> {
  const end = Date.now() + maxMs;
  while (!condition() && Date.now() < end) await sleep(2);
}

/** What the kill loop did. */
export interface KillReport {
  kills: number;
  /** Kills that landed before the run printed its ready line (during start or recovery). */
  beforeReady: number;
  /** Runs that ended on their own (not by our signal), with how. */
  unexpectedExits: string[];
  /**
   * Kills that landed while the platform had created a reply and not yet answered the call
   * (`between`): the bot died between the platform call and its confirmation.
   */
  betweenCallAndAnswer?: number;
}

/**
 * Starts the bot and SIGKILLs it `kills` times, starting it again after each kill: most kills
 * land a random `afterReadyMs` after the run printed its ready line (under traffic), one in
 * five a random `duringStartMs` after it was spawned (while it starts and recovers, whatever
 * the machine's load). With `between`, one in three of the kills after ready waits until the
 * platform holds the answer to a reply it created: the bot dies between the call and its
 * confirmation. Then starts it once more and waits until it is ready; returns that run.
 */
export async function killRepeatedly(
  setup: CrashSetup,
  options: {
    kills: number;
    afterReadyMs: [number, number];
    duringStartMs: [number, number];
    random: () => number;
    /** Whether the platform holds the answer to a reply it created, at the moment of a kill. */
    between?: () => boolean;
  },
): Promise<{ last: BotRun; report: KillReport }> {
  const report: KillReport = {
    kills: 0,
    beforeReady: 0,
    unexpectedExits: [],
    betweenCallAndAnswer: 0,
  };
  const between = ([min, max]: [number, number]) => min + options.random() * (max - min);
  for (let i = 0; i < options.kills; i++) {
    const run = startBot(setup);
    let isReady = false;
    void run.ready.then((ok) => (isReady = ok));
    const duringStart = options.random() < 0.2;
    // One kill in three after ready waits for a reply the platform created and has not answered.
    const held = options.between;
    const atAnswer = held !== undefined && !duringStart && options.random() < 1 / 3;
    const afterReady = between(options.afterReadyMs);
    const moment = duringStart
      ? sleep(between(options.duringStartMs))
      : run.ready.then((ok) => {
          if (!ok) return new Promise(() => {});
          return atAnswer ? until(held, afterReady + HELD_WAIT_MS) : sleep(afterReady);
        });
    const ended = await Promise.race([moment.then(() => undefined), run.exited]);
    if (ended !== undefined) {
      report.unexpectedExits.push(ended.signal ?? `exit ${ended.code}`);
      continue;
    }
    if (options.between?.() === true) report.betweenCallAndAnswer! += 1;
    run.child.kill('SIGKILL');
    await run.exited;
    report.kills++;
    if (!isReady) report.beforeReady++;
  }
  const last = startBot(setup);
  if (!(await last.ready)) {
    const { code, signal } = await last.exited;
    throw new Error(
      `the last run did not start (${signal ?? `exit ${code}`}); see ${setup.logFile}`,
    );
  }
  return { last, report };
}

/**
 * Waits until `done()` holds, or until `progress()` has not changed for `quietMs`, or `maxMs`
 * passed: a bot that lost work never finishes it, so the drain ends when nothing moves.
 */
export async function drain(
  done: () => boolean,
  progress: () => number,
  { quietMs = 3000, maxMs = 60_000 } = {},
): Promise<void> {
  const started = Date.now();
  let last = progress();
  let lastChange = Date.now();
  while (!done() && Date.now() - lastChange < quietMs && Date.now() - started < maxMs) {
    await sleep(50);
    const now = progress();
    if (now !== last) {
      last = now;
      lastChange = Date.now();
    }
  }
}

/** Stops a run with SIGTERM (a graceful stop), or SIGKILL when it does not end in 10 s. */
export async function stopBot(run: BotRun): Promise<string> {
  run.child.kill('SIGTERM');
  const ended = await Promise.race([run.exited, sleep(10_000).then(() => undefined)]);
  if (ended !== undefined) return ended.signal ?? `exit ${ended.code}`;
  run.child.kill('SIGKILL');
  await run.exited;
  return 'did not stop within 10 s (killed)';
}

/** A turn as both sides know it: `<platform channel id>:<platform message id>`. */
export type TurnKey = string;

/**
 * The agent runs that record their turn as not answered: the reply unconfirmed, the work
 * expired, or given up after `maxRunAttempts` interrupted starts (kills in a row that each land
 * while the same resumed run is under way, as a turn that crashes the bot would).
 */
export const RECORDED_UNANSWERED = `status IN ('unconfirmed', 'expired')
  OR (status = 'failed' AND error LIKE 'not resumed: the agent was started %')`;

/** What the database holds, read after the bot has stopped. */
export interface StoredTurns {
  /** Every stored turn by platform key (each part of a split reply too) → its colloquy id. */
  byKey: Map<TurnKey, string>;
  /** Inbound colloquy ids whose agent run is recorded as not answered (`RECORDED_UNANSWERED`). */
  recordedUnanswered: Set<string>;
  /**
   * Inbound colloquy ids whose reply row was recorded before the send and never confirmed
   * (`messages.delivery = 'unconfirmed'`): the bot died between the platform call and the
   * confirmation, so the record has the reply but not its platform id.
   */
  unconfirmedReplyFor: Set<string>;
  /**
   * The text of every reply recorded (whatever its delivery), by the platform key of the turn
   * it answers (`<channel id>:<reply_to_message_id>`).
   */
  replyTexts: Map<TurnKey, string[]>;
  /** Inbound colloquy ids whose run is recorded `unconfirmed`. */
  unconfirmedRuns: Set<string>;
  /** Whether the file has the `agent_runs` table at all. */
  hasRuns: boolean;
}

/** Reads the turns and runs of a colloquy SQLite file. */
export function readStore(file: string): StoredTurns {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const byKey = new Map<TurnKey, string>();
    const rows = db
      .prepare('SELECT id, channel_id, platform_message_id, metadata FROM messages')
      .all() as {
      id: string;
      channel_id: string;
      platform_message_id: string | null;
      metadata: string | null;
    }[];
    for (const row of rows) {
      if (row.platform_message_id !== null) {
        byKey.set(`${row.channel_id}:${row.platform_message_id}`, row.id);
      }
      const parts = (JSON.parse(row.metadata ?? '{}') as { partMessageIds?: unknown })
        .partMessageIds;
      if (Array.isArray(parts)) {
        for (const part of parts) byKey.set(`${row.channel_id}:${String(part)}`, row.id);
      }
    }
    const hasRuns =
      db
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'agent_runs'")
        .get() !== undefined;
    const recordedUnanswered = new Set<string>(
      hasRuns
        ? (db
            .prepare(`SELECT message_id FROM agent_runs WHERE ${RECORDED_UNANSWERED}`)
            .pluck()
            .all() as string[])
        : [],
    );
    const hasDelivery = (
      db.prepare('PRAGMA table_info(messages)').all() as { name: string }[]
    ).some((column) => column.name === 'delivery');
    const unconfirmedReplyFor = new Set<string>(
      hasRuns && hasDelivery
        ? (db
            .prepare(
              "SELECT r.message_id FROM agent_runs r JOIN messages m ON m.id = r.reply_id WHERE m.delivery = 'unconfirmed'",
            )
            .pluck()
            .all() as string[])
        : [],
    );
    const replyTexts = new Map<TurnKey, string[]>();
    if (hasDelivery) {
      const replies = db
        .prepare(
          'SELECT channel_id, reply_to_message_id, content FROM messages WHERE delivery IS NOT NULL',
        )
        .all() as { channel_id: string; reply_to_message_id: string | null; content: string }[];
      for (const reply of replies) {
        const key = `${reply.channel_id}:${reply.reply_to_message_id}`;
        replyTexts.set(key, [...(replyTexts.get(key) ?? []), reply.content]);
      }
    }
    const unconfirmedRuns = new Set<string>(
      hasRuns
        ? (db
            .prepare("SELECT message_id FROM agent_runs WHERE status = 'unconfirmed'")
            .pluck()
            .all() as string[])
        : [],
    );
    return {
      byKey,
      recordedUnanswered,
      unconfirmedReplyFor,
      replyTexts,
      unconfirmedRuns,
      hasRuns,
    };
  } finally {
    db.close();
  }
}

/** What the platform fake saw, in platform keys. */
export interface PlatformRecord {
  /** Turns people wrote that the platform counts as acknowledged (delivered). */
  acknowledged: { key: TurnKey; addressed: boolean }[];
  /** Replies the platform accepted: their key, the turn each answers, and their text. */
  replies: { key: TurnKey; answers: TurnKey | undefined; text: string }[];
}

/** Whether every addressed turn the platform acknowledged has a reply on the platform. */
export function everyAddressedAnswered({ acknowledged, replies }: PlatformRecord): boolean {
  const answered = new Set(replies.map((reply) => reply.answers));
  return acknowledged.every((turn) => !turn.addressed || answered.has(turn.key));
}

/** The counts the crash test asserts on and prints (the issue's table). */
export interface CrashCounts {
  path: string;
  rate: number;
  kills: number;
  killsBeforeReady: number;
  sent: number;
  acknowledged: number;
  acknowledgedMissing: number;
  replies: number;
  /** Replies on the platform whose text the record lacks (no reply row answering that turn). */
  repliesMissing: number;
  /** Replies on the platform the record holds (by text) without their platform id. */
  repliesWithoutId: number;
  /** Of those, the ones recorded `unconfirmed` (at most once, where nothing can be found). */
  repliesUnconfirmed: number;
  answeredTwice: number;
  addressed: number;
  unanswered: number;
  /** Unanswered turns the bot recorded as not answered (`RECORDED_UNANSWERED`; accounted for). */
  recordedUnanswered: number;
  /** Runs recorded `unconfirmed` (a reply the restart could not settle). */
  runsUnconfirmed: number;
  killsBetweenCallAndAnswer: number;
  unexpectedExits: string[];
  finalStop: string;
}

/** Compares the platform's record with the database. */
export function compare(
  platform: PlatformRecord,
  stored: StoredTurns,
  base: Pick<CrashCounts, 'path' | 'rate' | 'sent' | 'finalStop'> & { kills: KillReport },
): CrashCounts {
  const acknowledged = new Map(platform.acknowledged.map((turn) => [turn.key, turn]));
  const replyCount = new Map<TurnKey, number>();
  for (const reply of platform.replies) {
    if (reply.answers === undefined) continue;
    replyCount.set(reply.answers, (replyCount.get(reply.answers) ?? 0) + 1);
  }
  const addressed = [...acknowledged.values()].filter((turn) => turn.addressed);
  let unanswered = 0;
  let accounted = 0;
  for (const turn of addressed) {
    if ((replyCount.get(turn.key) ?? 0) > 0) continue;
    const id = stored.byKey.get(turn.key);
    if (id !== undefined && stored.recordedUnanswered.has(id)) accounted++;
    else unanswered++;
  }
  const notStored = platform.replies.filter((reply) => !stored.byKey.has(reply.key));
  const recordedText = (reply: PlatformRecord['replies'][number]) =>
    reply.answers !== undefined &&
    (stored.replyTexts.get(reply.answers) ?? []).some((text) =>
      comparable(text).includes(comparable(reply.text)),
    );
  const withoutId = notStored.filter(recordedText);
  const unconfirmedReplies = withoutId.filter((reply) => {
    const turn = reply.answers === undefined ? undefined : stored.byKey.get(reply.answers);
    return turn !== undefined && stored.unconfirmedReplyFor.has(turn);
  }).length;
  return {
    path: base.path,
    rate: base.rate,
    kills: base.kills.kills,
    killsBeforeReady: base.kills.beforeReady,
    sent: base.sent,
    acknowledged: acknowledged.size,
    acknowledgedMissing: [...acknowledged.keys()].filter((key) => !stored.byKey.has(key)).length,
    replies: platform.replies.length,
    repliesMissing: notStored.length - withoutId.length,
    repliesWithoutId: withoutId.length,
    repliesUnconfirmed: unconfirmedReplies,
    answeredTwice: [...replyCount.values()].filter((count) => count > 1).length,
    addressed: addressed.length,
    unanswered,
    recordedUnanswered: accounted,
    runsUnconfirmed: stored.unconfirmedRuns.size,
    killsBetweenCallAndAnswer: base.kills.betweenCallAndAnswer ?? 0,
    unexpectedExits: base.kills.unexpectedExits,
    finalStop: base.finalStop,
  };
}

/** Text as both sides can compare it: entities decoded, letters and digits only, lower case. */
function comparable(text: string): string {
  const decoded = text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return decoded.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

/** One line of the table, printed and (with `CRASH_REPORT=<file>`) appended to a file. */
export function printCounts(counts: CrashCounts, seed: number, notes?: string): void {
  const line =
    `| ${counts.path}, ${counts.rate}/s, ${counts.kills} kills (${counts.killsBeforeReady} before ready, ` +
    `${counts.killsBetweenCallAndAnswer} between a platform call and its answer) ` +
    `| ${counts.acknowledgedMissing} of ${counts.acknowledged} ` +
    `| ${counts.repliesMissing} of ${counts.replies} ` +
    `| ${counts.repliesWithoutId} (${counts.repliesUnconfirmed} recorded unconfirmed) ` +
    `| ${counts.answeredTwice} ` +
    `| ${counts.unanswered} of ${counts.addressed} (${counts.recordedUnanswered} recorded unconfirmed/expired/given up) ` +
    `| seed ${seed}; sent ${counts.sent}; ${counts.runsUnconfirmed} runs unconfirmed; last stop: ${counts.finalStop}` +
    (counts.unexpectedExits.length > 0
      ? `; exited by itself: ${counts.unexpectedExits.join(', ')}`
      : '') +
    (notes === undefined ? '' : `; ${notes}`) +
    ' |';
  console.log(
    '| path | acknowledged but not stored | replies on the platform missing from the record (by text) | replies whose platform id the record lacks | answered twice | addressed turns never answered | run |\n' +
      '|---|---|---|---|---|---|---|\n' +
      line,
  );
  const file = process.env.CRASH_REPORT;
  if (file) appendFileSync(file, `${line}\n`);
}

/** The seed of this run: `CRASH_SEED` or a fresh one. */
export function crashSeed(): number {
  const given = Number(process.env.CRASH_SEED);
  return Number.isInteger(given) && given > 0 ? given : Math.floor(Math.random() * 2 ** 31) + 1;
}
