import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type Database from 'better-sqlite3';
import { SqliteConversationStore } from '../../db/index.js';
import { Corpus } from './corpus.js';
import { handWrittenBatch, handWrittenInsert, handWrittenNewest, likeScan } from './raw.js';
import {
  type Latency,
  int,
  latency,
  line,
  mib,
  note,
  peakRss,
  percentiles,
  perSecond,
  rng,
  timed,
  verdict,
} from './report.js';

export interface StoreBenchOptions {
  /** Turns in the database (in 1,000 conversations). */
  messages: number;
  /** Folder for the database files. */
  dir: string;
  /** Turns written one by one through each writer (default min(100,000, messages)). */
  measured?: number;
  /** Timed calls of each read (default 2,000). */
  reads?: number;
}

/** A target met or missed, for the summary at the end. */
export interface Outcome {
  label: string;
  pass: boolean;
}

const CHUNK = 10_000;
const FILL_BATCH = 10_000;

/**
 * Issue 2: capture `append` against hand-written inserts, then `get` and `search` on an
 * N-turn database against hand-written SELECT and LIKE. Prints as it goes.
 */
export async function benchStore(options: StoreBenchOptions): Promise<Outcome[]> {
  const { messages, dir } = options;
  const measured = Math.min(options.measured ?? 100_000, messages);
  const reads = options.reads ?? 2000;
  const storePath = join(dir, 'store.db');
  const rawPath = join(dir, 'raw.db');
  for (const path of [storePath, rawPath]) removeDb(path);

  console.log(`\n── Store (issue 2): ${int(messages)} turns in 1,000 conversations ──`);
  const corpus = new Corpus();
  await warmUp();

  // 1. append vs hand-written inserts, same turns, two fresh files growing side by side.
  const store = new SqliteConversationStore({ path: storePath });
  const rawStore = new SqliteConversationStore({ path: rawPath });
  const insert = handWrittenInsert(rawStore.db);
  const storeTimes = new Float64Array(measured);
  const rawTimes = new Float64Array(measured);
  for (let from = 0, round = 0; from < measured; from += CHUNK, round++) {
    const turns = corpus.take(Math.min(CHUNK, measured - from));
    const viaStore = async () => {
      for (let i = 0; i < turns.length; i++) {
        const start = performance.now();
        const { inserted } = await store.append(turns[i]!);
        storeTimes[from + i] = performance.now() - start;
        if (!inserted) throw new Error(`store.append refused ${turns[i]!.id}`);
      }
    };
    const viaRaw = () => {
      for (let i = 0; i < turns.length; i++) {
        const start = performance.now();
        const inserted = insert(turns[i]!);
        rawTimes[from + i] = performance.now() - start;
        if (!inserted) throw new Error(`hand-written insert refused ${turns[i]!.id}`);
      }
    };
    // Alternate who goes first, so neither always meets a freshly checkpointed WAL.
    if (round % 2 === 0) {
      await viaStore();
      viaRaw();
    } else {
      viaRaw();
      await viaStore();
    }
  }
  const append = latency(storeTimes);
  const raw = latency(rawTimes);
  const ratio = raw.totalMs / append.totalMs;
  const pragmas = describePragmas(store.db);
  const rawPragmas = describePragmas(rawStore.db);
  const sameRows = countRows(store.db) === countRows(rawStore.db);
  for (const db of [store.db, rawStore.db]) db.pragma('wal_checkpoint(TRUNCATE)');
  const sizes = [fileSize(storePath), fileSize(rawPath)] as const;
  await rawStore.close();
  removeDb(rawPath);
  console.log(
    line(
      'append',
      `${perSecond(append.calls, append.totalMs)}  ${percentiles(append)}`,
      `raw insert ${perSecond(raw.calls, raw.totalMs)}  ${percentiles(raw)}`,
      `${Math.round(ratio * 100)}% of raw (target ≥ 80%) ${verdict(ratio >= 0.8)}`,
    ),
  );
  console.log(
    note(
      `${int(measured)} turns each, one call (one IMMEDIATE transaction) per turn, into two ` +
        `fresh files side by side, ${int(CHUNK)} at a time, alternating which goes first`,
    ),
  );
  console.log(
    note(
      `raw = hand-written prepared statements (participant upsert, conversation upsert, ` +
        `message insert deduped by the unique indexes, mentions), same schema, indexes and FTS ` +
        `triggers; pragmas ${pragmas}${pragmas === rawPragmas ? ' on both' : `, raw: ${rawPragmas}`}`,
    ),
  );
  console.log(
    note(
      `both files hold the same ${int(measured)} rows: ${sameRows ? 'yes' : 'NO'}; ` +
        `files after a checkpoint: store ${mib(sizes[0])}, raw ${mib(sizes[1])}`,
    ),
  );

  // 2. Fill the rest quickly.
  const rest = messages - measured;
  if (rest > 0) {
    const fill = handWrittenBatch(store.db);
    const start = performance.now();
    for (let done = 0; done < rest; done += FILL_BATCH) {
      fill(corpus.take(Math.min(FILL_BATCH, rest - done)));
    }
    const fillMs = performance.now() - start;
    console.log(
      note(
        `filled the other ${int(rest)} turns with the hand-written inserts in ` +
          `${int(FILL_BATCH)}-turn transactions (not capture's pattern, only to build the ` +
          `database): ${(fillMs / 1000).toFixed(1)} s, ${perSecond(rest, fillMs)}`,
      ),
    );
  }

  // 3. get newest 100, on random conversations.
  const random = rng(7);
  const pick = () => corpus.conversationIds[Math.floor(random() * corpus.conversationIds.length)]!;
  const newest = handWrittenNewest(store.db);
  let rowsSeen = 0;
  const [get, rawGet] = await pairedCalls(reads, pick, {
    ours: async (id) => (rowsSeen += (await store.get(id, { limit: 100 })).length),
    theirs: (id) => newest(id),
  });
  console.log(
    line(
      'get newest 100',
      percentiles(get),
      `raw SELECT ${percentiles(rawGet)}`,
      `p50 < 1 ms ${verdict(get.p50 < 1)}`,
    ),
  );
  console.log(
    note(
      `${int(get.calls)} calls on random conversations (${(rowsSeen / get.calls).toFixed(0)} ` +
        `turns each), alternating with the raw SELECT (same index walk, rows not mapped)`,
    ),
  );

  // 4. search one conversation: a rare word, and common words.
  const outcomes: Outcome[] = [
    { label: 'append ≥ 80% of raw', pass: ratio >= 0.8 },
    { label: 'get p50 < 1 ms', pass: get.p50 < 1 },
  ];
  const searches: [string, (id: string) => string][] = [
    ['search rare word', (id) => corpus.rareWordOf(id)],
    ["search 'the order'", () => 'the order'],
  ];
  for (const [label, queryOf] of searches) {
    const words = queryOf(corpus.conversationIds[0]!).split(' ');
    const like = likeScan(store.db, words.length);
    let found = 0;
    let likeFound = 0;
    const [search, scan] = await pairedCalls(reads, pick, {
      ours: async (id) => (found += (await store.search(id, queryOf(id))).length),
      theirs: (id) => (likeFound += like(id, queryOf(id).split(' ')).length),
    });
    console.log(
      line(
        label,
        percentiles(search),
        `LIKE scan ${percentiles(scan)}`,
        `p50 < 2 ms ${verdict(search.p50 < 2)}`,
      ),
    );
    console.log(
      note(
        `${int(search.calls)} calls on random conversations; results per call: search ` +
          `${(found / search.calls).toFixed(1)}, LIKE ${(likeFound / scan.calls).toFixed(1)} ` +
          `(LIKE tests every turn of the conversation, returns the newest 10 matches)`,
      ),
    );
    outcomes.push({ label: `${label} p50 < 2 ms`, pass: search.p50 < 2 });
  }

  await store.close();
  console.log(
    line(
      'database file',
      `${mib(fileSize(storePath))}`,
      `${int(fileSize(storePath) / messages)} bytes per turn, indexes and FTS included`,
    ),
  );
  console.log(line('peak memory (maxRSS)', peakRss(), 'of the whole process so far'));
  return outcomes;
}

/** JIT warm-up of both writers on a throwaway in-memory database. */
async function warmUp(): Promise<void> {
  const corpus = new Corpus({ seed: 1 });
  const store = new SqliteConversationStore({ path: ':memory:' });
  const raw = new SqliteConversationStore({ path: ':memory:' });
  const insert = handWrittenInsert(raw.db);
  for (const turn of corpus.take(3000)) {
    await store.append(turn);
    insert(turn);
  }
  await store.close();
  await raw.close();
}

/**
 * Times `calls` calls of two readers on the same random conversations, alternating which goes
 * first, after 100 untimed warm-up calls of each.
 */
async function pairedCalls(
  calls: number,
  pick: () => string,
  readers: { ours: (id: string) => Promise<unknown>; theirs: (id: string) => unknown },
): Promise<[Latency, Latency]> {
  for (let i = 0; i < 100; i++) {
    const id = pick();
    await readers.ours(id);
    readers.theirs(id);
  }
  const ours = new Float64Array(calls);
  const theirs = new Float64Array(calls);
  for (let i = 0; i < calls; i++) {
    const id = pick();
    if (i % 2 === 0) {
      ours[i] = await timed(() => readers.ours(id));
      theirs[i] = await timed(() => readers.theirs(id));
    } else {
      theirs[i] = await timed(() => readers.theirs(id));
      ours[i] = await timed(() => readers.ours(id));
    }
  }
  return [latency(ours), latency(theirs)];
}

function describePragmas(db: Database.Database): string {
  const get = (name: string) => String(db.pragma(name, { simple: true }));
  return (
    `journal_mode=${get('journal_mode')} synchronous=${get('synchronous')} ` +
    `foreign_keys=${get('foreign_keys')} cache_size=${get('cache_size')}`
  );
}

function countRows(db: Database.Database): number {
  return db.prepare('SELECT count(*) FROM messages').pluck().get() as number;
}

function fileSize(path: string): number {
  return [path, `${path}-wal`].reduce((n, p) => n + (existsSync(p) ? statSync(p).size : 0), 0);
}

function removeDb(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal'])
    rmSync(`${path}${suffix}`, { force: true });
}
