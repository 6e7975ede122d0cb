import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Chat, User } from 'grammy/types';
import { TelegramChannel } from '../../channels/telegram/index.js';
import { FakeTelegram } from '../../channels/telegram/fake.js';
import { SqliteConversationStore } from '../../db/sqlite/index.js';
import type { Agent, AgentResult } from '../../src/agent.js';
import { Bot } from '../../src/bot.js';
import type { ColloquyError } from '../../src/errors.js';
import { silentLogger } from '../../src/logger.js';
import type { AppendResult, ConversationStore, Page } from '../../src/store.js';
import type { ConversationSummary } from '../../src/store.js';
import type { NewMessage } from '../../src/types.js';
import { int, line, note, peakRss, verdict } from './report.js';
import type { Outcome } from './store.js';
import { removeDb } from './store-write.js';

export interface PipelineBenchOptions {
  /** Inbound updates per variant, timed (the bench passes 64,000). */
  events: number;
  /** Folder for the database file. */
  dir: string;
  /** Concurrent senders, each in its own DM (default 16). */
  senders?: number;
  /** Untimed updates per variant first (default 1,000). */
  warmUp?: number;
}

const SECRET = 'bench-webhook-secret';
/**
 * Updates per timed block. The variants' blocks run in alternating order, each capture block
 * next to a capture-off block: the machine's speed drifts by a third within a minute on a
 * shared VM (its hypervisor steals 3-20% of the CPU, varying by the second), and alternating
 * blocks weigh that drift on all alike. The overhead is the median over blocks of each
 * capture block against the capture-off block next to it: a block slowed by something else
 * on the machine moves it little. A block is timed until its last reply; its writes are then
 * finished before the next block starts, so none runs on into another variant's time. That
 * wait (`Block.drain`) is not counted in the verdict: the event loop idles while the writer
 * thread commits what it holds, work a steady stream of updates overlaps with the next
 * updates. The overhead with it counted is printed too, so a writer falling behind shows.
 */
const BLOCK = 500;
/** The inline-writes variant, only a comparison, runs this share of each block. */
const INLINE_SHARE = 0.25;

/** The trivial agent: answers every turn that concerns it with a fixed text, at once. */
class FixedReplyAgent implements Agent {
  readonly id = 'bench-agent';
  readonly name = 'Bench';
  async run(): Promise<AgentResult> {
    return { output: 'Thanks, noted. Someone from the orders team will get back to you.' };
  }
}

/** Capture switched off: the Bot has no switch for it, so this store's append stores nothing. */
class NoopStore implements ConversationStore {
  #sequence = 0;
  async append(message: NewMessage): Promise<AppendResult> {
    return { message: { ...message, sequence: ++this.#sequence }, inserted: true };
  }
  async get(): Promise<[]> {
    return [];
  }
  async search(): Promise<[]> {
    return [];
  }
  async deleteMessages(): Promise<number> {
    return 0;
  }
  async listConversations(): Promise<Page<ConversationSummary>> {
    return { items: [] };
  }
  async getConversation(): Promise<undefined> {
    return undefined;
  }
  async deleteConversation(): Promise<boolean> {
    return false;
  }
  async forgetParticipant(): Promise<number> {
    return 0;
  }
  async recordEdit(): Promise<boolean> {
    return false;
  }
  async recordDeletion(): Promise<boolean> {
    return false;
  }
  async getSummary(): Promise<undefined> {
    return undefined;
  }
  async getMessage(): Promise<undefined> {
    return undefined;
  }
  async findMessage(): Promise<undefined> {
    return undefined;
  }
  async findByPlatformRef(): Promise<undefined> {
    return undefined;
  }
  async recordReaction(): Promise<boolean> {
    return false;
  }
  async getReactions(): Promise<[]> {
    return [];
  }
  async close(): Promise<void> {}
  async createConversation(): Promise<ConversationSummary> {
    throw new Error('this store keeps nothing');
  }
  async updateConversation(): Promise<undefined> {
    return undefined;
  }
}

interface Pipeline {
  telegram: FakeTelegram;
  bot: Bot;
  server: Server;
  url: string;
  errors: ColloquyError[];
  /** HTTP answers other than 200. */
  refused: number;
  /** The event loop over the timed blocks, and the waits for their writes after them. */
  loop: LoopTime;
  /** The timed blocks, in order. */
  blocks: Block[];
  /** Each timed POST's time to its answer (the acknowledgement), ms. */
  acks: number[];
}

/** One block of updates. */
interface Block {
  /** Updates sent. */
  count: number;
  /** From the first update to the last reply, ms. */
  ms: number;
  /** From the last reply until the block's writes were done, ms. */
  drain: number;
}

/**
 * FakeTelegram (the Bot API on loopback) ← TelegramChannel (grammy) ← Bot ← `store`, with the
 * channel's `webhookHandler` mounted on a local HTTP server the fake POSTs updates to.
 */
async function startPipeline(store: ConversationStore): Promise<Pipeline> {
  const telegram = await FakeTelegram.start({ bot: { username: 'colloquy_bench_bot' } });
  const channel = new TelegramChannel({
    token: telegram.token,
    mode: 'webhook',
    webhook: { secretToken: SECRET },
    client: { apiRoot: telegram.apiRoot },
    botInfo: telegram.botInfo,
  });
  const bot = new Bot({
    channels: [channel],
    agents: [new FixedReplyAgent()],
    store,
    logger: silentLogger,
  });
  const errors: ColloquyError[] = [];
  bot.catch((error) => void errors.push(error));
  await bot.start();
  const server = createServer((req, res) => channel.webhookHandler(req, res));
  // The senders keep their connections across blocks: a wait for a block's writes on a busy
  // machine must not close one under a request (Node's default is 5 s).
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    telegram,
    bot,
    server,
    url: `http://127.0.0.1:${port}/telegram`,
    errors,
    refused: 0,
    acks: [],
    loop: { active: 0, total: 0, otherCpu: 0 },
    blocks: [],
  };
}

async function stopPipeline(pipeline: Pipeline): Promise<void> {
  await pipeline.bot.stop();
  pipeline.server.closeAllConnections();
  await new Promise<void>((resolve) => pipeline.server.close(() => resolve()));
  await pipeline.telegram.close();
}

/**
 * Event-loop time, ms: busy (running JavaScript or native calls) and in all, per variant; and
 * the CPU time of the process's other threads (writer thread, checkpoints, GC helpers), ms,
 * where Linux tells the main thread's own (NaN elsewhere).
 */
interface LoopTime {
  active: number;
  total: number;
  otherCpu: number;
}

/** CPU time of the main thread so far, ms (Linux: /proc, in clock ticks of 10 ms); else NaN. */
function mainThreadCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** CPU time of the whole process so far, all threads, ms. */
function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** `count` updates from `senders` people writing to the bot in DMs at once, then their writes. */
async function send(pipeline: Pipeline, count: number, senders: number): Promise<Block> {
  const loop = performance.eventLoopUtilization();
  const cpu = { all: processCpuMs(), main: mainThreadCpuMs() };
  try {
    return await sendAll(pipeline, count, senders);
  } finally {
    const used = performance.eventLoopUtilization(loop);
    pipeline.loop.active += used.active;
    pipeline.loop.total += used.idle + used.active;
    pipeline.loop.otherCpu += processCpuMs() - cpu.all - (mainThreadCpuMs() - cpu.main);
  }
}

async function sendAll(pipeline: Pipeline, count: number, senders: number): Promise<Block> {
  const start = performance.now();
  await Promise.all(
    Array.from({ length: senders }, async (_, s) => {
      const from: User = { id: 2001 + s, is_bot: false, first_name: `Sender ${s + 1}` };
      const chat: Chat = { id: from.id, type: 'private', first_name: from.first_name };
      for (let k = s; k < count; k += senders) {
        const text = `Hi, where is my order ${4700 + k}? It was due yesterday.`;
        const message = pipeline.telegram.buildMessage({ chat, from, text });
        const posted = performance.now();
        const { status } = await pipeline.telegram.postWebhook(pipeline.url, { message }, SECRET);
        pipeline.acks.push(performance.now() - posted);
        if (status !== 200) pipeline.refused++;
      }
    }),
  );
  // The webhook answers once a turn is committed; the block ends once every reply was sent.
  await pipeline.bot.idle();
  const ms = performance.now() - start;
  // Its turns are written before the next block starts: none of its writes run on into the
  // next variant's time.
  await pipeline.bot.settled();
  return { count, ms, drain: performance.now() - start - ms };
}

/**
 * Telegram webhook updates per second through the whole pipeline with capture into
 * SQLite (writes on the store's writer thread, the default; and inline, for comparison), next
 * to the same pipeline with capture off.
 */
export async function benchPipeline(options: PipelineBenchOptions): Promise<Outcome[]> {
  const { events, dir } = options;
  const senders = options.senders ?? 16;
  const warmUp = options.warmUp ?? 1000;
  console.log(`\n── Pipeline: Telegram webhook → Bot → capture → agent → reply ──`);
  const stores = [true, false].map((writerThread) => {
    const path = join(dir, `pipeline-${writerThread ? 'thread' : 'inline'}.db`);
    removeDb(path); // a fresh file: a reused --dir would hold these very turns already
    return new SqliteConversationStore({ path, writerThread });
  });
  const [thread, inline] = stores as [SqliteConversationStore, SqliteConversationStore];
  const threadMode = 'as in the store a bot opens by default';
  // The order A C B, B C A, A C B…: each capture block (A) next to a capture-off block (C).
  const pipelines = [
    await startPipeline(thread),
    await startPipeline(new NoopStore()),
    await startPipeline(inline),
  ];
  const [threaded, uncaptured, inlined] = pipelines as [Pipeline, Pipeline, Pipeline];
  try {
    for (const pipeline of pipelines) {
      await send(pipeline, warmUp, senders);
      pipeline.loop = { active: 0, total: 0, otherCpu: 0 };
      pipeline.acks = [];
    }
    for (let b = 0, done = 0; done < events; b++, done += BLOCK) {
      const n = Math.min(BLOCK, events - done);
      for (const pipeline of b % 2 === 0 ? pipelines : [...pipelines].reverse()) {
        const count = pipeline === inlined ? Math.ceil(n * INLINE_SHARE) : n;
        pipeline.blocks.push(await send(pipeline, count, senders));
      }
    }
  } finally {
    for (const pipeline of pipelines) await stopPipeline(pipeline);
  }
  const count = (store: SqliteConversationStore) =>
    store.db.prepare('SELECT count(*) FROM messages').pluck().get() as number;
  const stored = stores.map(count);
  for (const store of stores) await store.close();

  const sum = (blocks: Block[], of: (block: Block) => number) =>
    blocks.reduce((total, block) => total + of(block), 0);
  const timed = (p: Pipeline) => sum(p.blocks, (block) => block.count);
  /** Updates per second over `blocks`; `drained`: the waits for their writes counted too. */
  const rateOf = (blocks: Block[], drained = false) =>
    (sum(blocks, (b) => b.count) * 1000) / sum(blocks, (b) => b.ms + (drained ? b.drain : 0));
  const rate = (p: Pipeline, drained = false) => rateOf(p.blocks, drained);
  const off = rate(uncaptured);
  const overall = (p: Pipeline, drained = false) =>
    1 - rate(p, drained) / rate(uncaptured, drained);
  /** Each block of `p` against the capture-off block next to it, smallest first. */
  const pairs = (p: Pipeline, drained = false) =>
    p.blocks
      .map((block, b) => 1 - rateOf([block], drained) / rateOf([uncaptured.blocks[b]!], drained))
      .sort((x, y) => x - y);
  const overhead = (p: Pipeline) => median(pairs(p));
  const pass = overhead(threaded) < 0.1;
  const percent = (x: number) => `${(x * 100).toFixed(1)}%`;
  console.log(
    line(
      'webhook events',
      `${int(rate(threaded))}/s with capture into SQLite`,
      `capture off ${int(off)}/s`,
      `overhead ${percent(overhead(threaded))} (target < 10%) ${verdict(pass)}`,
    ),
  );
  console.log(
    note(
      `overhead: the median over the ${threaded.blocks.length} pairs of blocks (each capture block against ` +
        `the capture-off block next to it); over all blocks together it was ` +
        `${percent(overall(threaded))}; pairs ranged ${percent(pairs(threaded)[0]!)} to ` +
        `${percent(pairs(threaded).at(-1)!)}; ${interval(pairs(threaded))}`,
    ),
  );
  const quantile = (p: Pipeline, q: number) => {
    const sorted = [...p.acks].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  };
  const ms = (x: number) => `${x.toFixed(2)} ms`;
  console.log(
    line(
      'acknowledgement',
      `webhook answered after the commit: p50 ${ms(quantile(threaded, 0.5))}, p99 ${ms(quantile(threaded, 0.99))}`,
      `capture off p50 ${ms(quantile(uncaptured, 0.5))}, p99 ${ms(quantile(uncaptured, 0.99))}`,
      `added p50 ${ms(quantile(threaded, 0.5) - quantile(uncaptured, 0.5))}, p99 ${ms(quantile(threaded, 0.99) - quantile(uncaptured, 0.99))}`,
    ),
  );
  const busy = (p: Pipeline) => `${((p.loop.active / p.loop.total) * 100).toFixed(0)}%`;
  const perEvent = (p: Pipeline) =>
    `${(p.loop.active / timed(p) - uncaptured.loop.active / timed(uncaptured)).toFixed(3)} ms`;
  console.log(
    note(
      `SQLite writes on the store's writer thread (writerThread: true, ${threadMode}): the ` +
        `event loop was busy ${busy(threaded)} of the time (${busy(uncaptured)} with capture ` +
        `off); capture costs it ${perEvent(threaded)} per update (its batches handed to the ` +
        `thread: the turn with its runs, the reply record, the confirmation)`,
    ),
  );
  const other = (p: Pipeline) => `${(p.loop.otherCpu / timed(p)).toFixed(3)} ms`;
  if (!Number.isNaN(threaded.loop.otherCpu)) {
    console.log(
      note(
        `the process's other threads used ${other(threaded)} of CPU per update with capture ` +
          `(writer thread, checkpoints, GC helpers), ${other(uncaptured)} with capture off; ` +
          `on a machine with few cores that work competes with the event loop`,
      ),
    );
  }
  console.log(
    note(
      `the same with writes inline on the event loop (writerThread: false): ` +
        `${int(rate(inlined))}/s, overhead ${percent(overhead(inlined))} (median of pairs), loop busy ` +
        `${busy(inlined)}, capture costs it ${perEvent(inlined)} per update`,
    ),
  );
  console.log(
    note(
      `${int(events)} updates per variant (${int(timed(inlined))} with writes inline; each ` +
        `+${int(warmUp)} warm-up) from ${senders} concurrent senders in DMs, real HTTP POSTs ` +
        `with the secret token to channel.webhookHandler; each POST answers once its turn is ` +
        `committed (acknowledge after commit) and a block is timed until every reply was sent ` +
        `(every turn is counted in SQLite below); ${threaded.blocks.length} blocks of ${int(BLOCK)} in alternating order`,
    ),
  );
  const drain = (p: Pipeline) =>
    `${(sum(p.blocks, (b) => b.drain) / p.blocks.length).toFixed(1)} ms`;
  console.log(
    note(
      `each block is timed until its last reply; its pending writes were then finished, ` +
        `untimed, before the next block: ${drain(threaded)} a block with capture, ` +
        `${drain(uncaptured)} off. Timed too, the overhead would be ` +
        `${percent(median(pairs(threaded, true)))} (median of pairs), ` +
        `${percent(overall(threaded, true))} over all blocks; the event loop and CPU figures ` +
        `above include that wait`,
    ),
  );
  console.log(
    note(
      `capture off = the same Bot with a store whose append is a no-op (BotOptions has no ` +
        `switch to disable capture); capture still queues and hands over every write`,
    ),
  );
  const expected = pipelines.map((p) => timed(p) + warmUp);
  const sent = pipelines.map((p) => p.telegram.sent.length);
  /** Turns each SQLite store should hold (`stores`: thread, inline): two per update. */
  const turns = [threaded, inlined].map((p) => (timed(p) + warmUp) * 2);
  const errors = pipelines.reduce((sum, p) => sum + p.errors.length, 0);
  const refused = pipelines.reduce((sum, p) => sum + p.refused, 0);
  console.log(
    note(
      `checked: replies sent ${sent.map(int).join(' / ')} of ${expected.map(int).join(' / ')}, ` +
        `turns in SQLite ${stored.map(int).join(' / ')} of ` +
        `${turns.map(int).join(' / ')}, non-200 answers ` +
        `${refused}, bot errors ${errors}; peak memory so far ${peakRss()}`,
    ),
  );
  for (const error of pipelines.flatMap((p) => p.errors).slice(0, 3)) {
    console.log(note(`error: ${error.name}: ${error.message}`));
  }
  const complete =
    sent.every((n, i) => n === expected[i]) &&
    stored.every((n, i) => n === turns[i]) &&
    errors === 0;
  return [
    { label: 'pipeline capture overhead < 10%', pass },
    ...(complete ? [] : [{ label: 'pipeline handled every update completely', pass: false }]),
  ];
}

/** The middle of `sorted` (ascending), or the mean of its two middle values. */
function median(sorted: number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The 95% confidence interval of the median of `sorted`, as the bench prints it. */
function interval(sorted: number[]): string {
  const [low, high] = medianInterval(sorted).map((x) => `${(x * 100).toFixed(1)}%`);
  return sorted.length > 5
    ? `95% confidence interval of the median ${low} to ${high} (more pairs narrow it: --events)`
    : `too few pairs for a 95% confidence interval of the median (--events)`;
}

/**
 * A 95% confidence interval for the median of the distribution `sorted` (ascending) was drawn
 * from, assuming nothing of its shape: from the k-th smallest to the k-th largest value, k the
 * largest rank that a median falls below with probability at most 2.5% (binomial, p = ½).
 * The whole range when there are 5 values or fewer.
 */
function medianInterval(sorted: number[]): [number, number] {
  const n = sorted.length;
  let below = 0; // P(Binomial(n, ½) <= k - 1), for k = 1, 2, …
  let logTerm = -n * Math.LN2; // ln P(Binomial(n, ½) = k - 1), which 0.5 ** n underflows
  let k = 0;
  for (let i = 0; i < n; i++) {
    below += Math.exp(logTerm);
    if (below > 0.025) break;
    k = i + 1;
    logTerm += Math.log((n - i) / (i + 1));
  }
  return k === 0 ? [sorted[0]!, sorted[n - 1]!] : [sorted[k - 1]!, sorted[n - k]!];
}
