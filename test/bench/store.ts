import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SqliteConversationStore } from '../../db/sqlite/index.js';
import { Corpus } from './corpus.js';
import { handWrittenNewest, likeScan } from './raw.js';
import {
  type Latency,
  int,
  latency,
  line,
  mib,
  note,
  peakRss,
  percentiles,
  rng,
  verdict,
} from './report.js';
import { fileSize, fill, removeDb } from './store-write.js';

export interface StoreBenchOptions {
  /** Turns in the database (in 1,000 conversations). */
  messages: number;
  /** Folder for the database files. */
  dir: string;
  /** Timed `get` calls (default 2,000). */
  reads?: number;
  /** Timed calls of each search (default 1,000). */
  searches?: number;
}

/** A target met or missed, for the summary at the end. */
export interface Outcome {
  label: string;
  pass: boolean;
}

/**
 * `get` and `search` on an N-turn database (built once per run, in the bench's folder)
 * against a hand-written SELECT and a LIKE scan. Prints as it goes.
 */
export async function benchStore(options: StoreBenchOptions): Promise<Outcome[]> {
  const { messages, dir } = options;
  const storePath = join(dir, 'store.db');
  removeDb(storePath);
  console.log(`\n── Store: ${int(messages)} turns in 1,000 conversations ──`);

  const corpus = new Corpus();
  const store = new SqliteConversationStore({ path: storePath });
  const outcomes: Outcome[] = [];
  try {
    fill(store.db, corpus, messages);

    const random = rng(7);
    const ids = corpus.conversationIds;
    const pick = () => ids[Math.floor(random() * ids.length)]!;
    outcomes.push(await measureGet(store, pick, options.reads ?? 2000));
    const queries: [string, (id: string) => string][] = [
      ['search rare word', (id) => corpus.rareWordOf(id)],
      ["search 'the order'", () => 'the order'],
    ];
    for (const [label, queryOf] of queries) {
      outcomes.push(await measureSearch(store, pick, options.searches ?? 1000, label, queryOf));
    }
  } finally {
    await store.close();
  }
  const size = fileSize(storePath);
  console.log(
    line(
      'database file',
      mib(size),
      `${int(size / messages)} bytes per turn, indexes and FTS included`,
    ),
  );
  console.log(line('peak memory (maxRSS)', peakRss(), 'of the whole process so far'));
  return outcomes;
}

/** `get` of the newest 100 turns of random conversations, against the hand-written SELECT. */
async function measureGet(
  store: SqliteConversationStore,
  pick: () => string,
  calls: number,
): Promise<Outcome> {
  const newest = handWrittenNewest(store.db);
  const paired = await pairedCalls(calls, pick, {
    ours: async (id) => (await store.get(id, { limit: 100 })).length,
    theirs: (id) => newest(id).length,
  });
  const { ours: get, theirs: raw } = paired;
  const pass = get.p50 < 1;
  console.log(
    line(
      'get newest 100',
      percentiles(get),
      `raw SELECT ${percentiles(raw)}`,
      `p50 < 1 ms ${verdict(pass)}`,
    ),
  );
  console.log(
    note(
      `${int(get.calls)} calls on random conversations (${paired.oursRows.toFixed(0)} ` +
        `turns each), alternating with the raw SELECT (same index walk, rows not mapped)`,
    ),
  );
  return { label: 'get p50 < 1 ms', pass };
}

/** `search` in random conversations, against a LIKE scan of the same conversation. */
async function measureSearch(
  store: SqliteConversationStore,
  pick: () => string,
  calls: number,
  label: string,
  queryOf: (conversationId: string) => string,
): Promise<Outcome> {
  const like = likeScan(store.db, queryOf(pick()).split(' ').length);
  const paired = await pairedCalls(calls, pick, {
    ours: async (id) => (await store.search(id, queryOf(id))).length,
    theirs: (id) => like(id, queryOf(id).split(' ')).length,
  });
  const { ours: search, theirs: scan } = paired;
  const pass = search.p50 < 2;
  console.log(
    line(
      label,
      percentiles(search),
      `LIKE scan ${percentiles(scan)}`,
      `p50 < 2 ms ${verdict(pass)}`,
    ),
  );
  console.log(
    note(
      `${int(search.calls)} calls on random conversations; results per call: search ` +
        `${paired.oursRows.toFixed(1)}, LIKE ${paired.theirsRows.toFixed(1)} ` +
        `(LIKE tests every turn of the conversation, returns the newest 10 matches)`,
    ),
  );
  return { label: `${label} p50 < 2 ms`, pass };
}

/** Per-call latency of both readers, and how many rows each returned per call on average. */
interface Paired {
  ours: Latency;
  theirs: Latency;
  oursRows: number;
  theirsRows: number;
}

/**
 * Times `calls` calls of two readers (each returns how many rows it got) on the same random
 * conversations, alternating which goes first, after 100 untimed warm-up calls of each.
 */
async function pairedCalls(
  calls: number,
  pick: () => string,
  readers: { ours: (id: string) => Promise<number>; theirs: (id: string) => number },
): Promise<Paired> {
  for (let i = 0; i < 100; i++) {
    const id = pick();
    await readers.ours(id);
    readers.theirs(id);
  }
  const ours = new Float64Array(calls);
  const theirs = new Float64Array(calls);
  let oursRows = 0;
  let theirsRows = 0;
  const runOurs = async (i: number, id: string) => {
    const start = performance.now();
    oursRows += await readers.ours(id);
    ours[i] = performance.now() - start;
  };
  const runTheirs = (i: number, id: string) => {
    const start = performance.now();
    theirsRows += readers.theirs(id);
    theirs[i] = performance.now() - start;
  };
  for (let i = 0; i < calls; i++) {
    const id = pick();
    if (i % 2 === 0) {
      await runOurs(i, id);
      runTheirs(i, id);
    } else {
      runTheirs(i, id);
      await runOurs(i, id);
    }
  }
  return {
    ours: latency(ours),
    theirs: latency(theirs),
    oursRows: oursRows / calls,
    theirsRows: theirsRows / calls,
  };
}
