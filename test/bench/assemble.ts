import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SqliteConversationStore } from '../../db/sqlite/index.js';
import { concerns } from '../../src/agent.js';
import { assemblePrompt } from '../../src/assemble.js';
import type { NewMessage, Participant } from '../../src/types.js';

export interface BenchAssembleOptions {
  /** Turns in the one conversation (default 100,000). */
  messages?: number;
  /** A person mentions the agent once in this many turns, and the agent answers (default 100). */
  addressedEvery?: number;
  /** Timed runs of each variant, after 10 warm-up runs (default 200). */
  iterations?: number;
  /** `maxTurnsToLoad` (default 100). */
  maxTurnsToLoad?: number;
  /** `tokenBudget` (default 3000). */
  tokenBudget?: number;
  /** Folder for the database file (default: a new temporary folder, removed afterwards). */
  dir?: string;
}

/** Latency percentiles of one variant, in milliseconds. */
export interface Timing {
  p50: number;
  p99: number;
  mean: number;
}

export interface BenchAssembleResult {
  messages: number;
  /** Turns concerning the agent in the whole conversation. */
  relevantTurns: number;
  /** How long filling the store took (ms). */
  fillMs: number;
  /** `assemblePrompt` end to end (addressed-only query, summary lookup, projection, budget). */
  assemble: Timing & { turnsIncluded: number; tokens: number };
  /** `store.get` with `concerning` alone. */
  concerningGet: Timing & { relevantFound: number };
  /** Baseline: load the latest `maxTurnsToLoad` turns, then filter with `concerns`. */
  latestThenFilter: Timing & { rowsLoaded: number; relevantFound: number };
  /** Baseline: load enough latest turns to expect `maxTurnsToLoad` relevant ones, then filter. */
  latestWideThenFilter: Timing & { rowsLoaded: number; relevantFound: number };
}

const agent: Participant = { kind: 'agent', id: 'support', displayName: 'Support' };
const BOT = 'slack:U0BOT';
const CONVERSATION = 'slack:T1:CBENCH';

function turn(i: number, addressedEvery: number): NewMessage {
  const phase = i % addressedEvery;
  const participant: Participant =
    phase === 1 ? agent : { kind: 'user', id: `slack:U${i % 13}`, displayName: `User ${i % 13}` };
  return {
    id: `${CONVERSATION}:${i}`,
    conversationId: CONVERSATION,
    participant,
    content:
      phase === 0
        ? `<@${BOT}> can you check order ${i} please, it has not arrived yet`
        : phase === 1
          ? `Order ${i - 1} left the warehouse yesterday and arrives tomorrow.`
          : `chatter ${i}: the build is green again after the cache fix, merging now`,
    timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    scope: 'channel',
    metadata: {
      channelType: 'slack',
      channelId: 'CBENCH',
      messageId: String(i),
      mentions: phase === 0 ? [BOT] : [],
    },
  };
}

async function timeRuns(iterations: number, run: () => Promise<unknown>): Promise<Timing> {
  for (let i = 0; i < 10; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor(times.length * p))] ?? 0;
  const round = (ms: number) => Math.round(ms * 1000) / 1000;
  return {
    p50: round(at(0.5)),
    p99: round(at(0.99)),
    mean: round(times.reduce((a, b) => a + b, 0) / times.length),
  };
}

/**
 * Measures `assemblePrompt` on a SQLite store holding one conversation of `messages` turns
 * in which the agent is addressed once in `addressedEvery`, against load-latest-then-filter
 * baselines. Prints nothing; returns the figures.
 *
 * @example
 * ```ts
 * const result = await benchAssemble({ messages: 100_000, iterations: 200 });
 * console.log(result.assemble.p50, result.latestWideThenFilter.p50);
 * ```
 */
export async function benchAssemble(opts: BenchAssembleOptions = {}): Promise<BenchAssembleResult> {
  const messages = opts.messages ?? 100_000;
  const addressedEvery = opts.addressedEvery ?? 100;
  const iterations = opts.iterations ?? 200;
  const maxTurnsToLoad = opts.maxTurnsToLoad ?? 100;
  const tokenBudget = opts.tokenBudget ?? 3000;
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'colloquy-bench-assemble-'));
  const store = SqliteConversationStore.open(join(dir, 'assemble.db'));
  const aliases = [agent.id, 'Support', BOT];
  try {
    const turns = Array.from({ length: messages }, (_, i) => turn(i, addressedEvery));
    const fillStart = performance.now();
    // Batches of appends share one transaction (each append nests as a savepoint).
    for (let start = 0; start < turns.length; start += 5000) {
      const pending: Promise<unknown>[] = [];
      store.db.transaction(() => {
        for (const t of turns.slice(start, start + 5000)) pending.push(store.append(t));
      })();
      await Promise.all(pending);
    }
    const fillMs = Math.round(performance.now() - fillStart);
    const relevantTurns = turns.filter((t) => concerns(t, aliases)).length;

    let last = { turnsIncluded: 0, tokens: 0 };
    const assemble = await timeRuns(iterations, async () => {
      const prompt = await assemblePrompt(store, CONVERSATION, agent.id, 'Support', {
        agentAliases: [BOT],
        maxTurnsToLoad,
        tokenBudget,
      });
      last = { turnsIncluded: prompt.turns.length, tokens: prompt.tokens };
    });

    let found = 0;
    const concerningGet = await timeRuns(iterations, async () => {
      found = (await store.get(CONVERSATION, { concerning: { aliases }, limit: maxTurnsToLoad }))
        .length;
    });

    const baseline = async (limit: number) => {
      let loaded = 0;
      let relevant = 0;
      const timing = await timeRuns(iterations, async () => {
        const rows = await store.get(CONVERSATION, { limit });
        loaded = rows.length;
        relevant = rows.filter((row) => concerns(row, aliases)).slice(-maxTurnsToLoad).length;
      });
      return { ...timing, rowsLoaded: loaded, relevantFound: relevant };
    };

    return {
      messages,
      relevantTurns,
      fillMs,
      assemble: { ...assemble, ...last },
      concerningGet: { ...concerningGet, relevantFound: found },
      latestThenFilter: await baseline(maxTurnsToLoad),
      latestWideThenFilter: await baseline(Math.ceil((maxTurnsToLoad * addressedEvery) / 2)),
    };
  } finally {
    await store.close();
    if (opts.dir === undefined) rmSync(dir, { recursive: true, force: true });
  }
}
