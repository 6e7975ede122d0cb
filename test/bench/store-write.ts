import { existsSync, rmSync, statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type Database from 'better-sqlite3';
import { SqliteConversationStore } from '../../db/sqlite/index.js';
import type { NewMessage } from '../../src/types.js';
import type { Corpus } from './corpus.js';
import { handWrittenBatch, handWrittenInsert } from './raw.js';
import { int, latency, line, mib, note, percentiles, perSecond, verdict } from './report.js';

const CHUNK = 10_000;
const FILL_BATCH = 10_000;

/**
 * `store.append` against the hand-written inserts: the next `count` turns of `corpus` written
 * one call per turn through each, into `store` and a fresh raw file at `rawPath` growing side
 * by side, CHUNK turns at a time, alternating which goes first. Prints the line and its
 * notes; returns whether append reached 80% of the raw rate. The raw file is deleted after.
 */
export async function measureAppend(
  store: SqliteConversationStore,
  corpus: Corpus,
  count: number,
  rawPath: string,
): Promise<boolean> {
  const rawStore = new SqliteConversationStore({ path: rawPath });
  const insert = handWrittenInsert(rawStore.db);
  const storeTimes = new Float64Array(count);
  const rawTimes = new Float64Array(count);
  for (let from = 0, round = 0; from < count; from += CHUNK, round++) {
    const turns = corpus.take(Math.min(CHUNK, count - from));
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
  // The checkpoint worker may hold the checkpoint lock a moment: try again until it is done.
  for (const db of [store.db, rawStore.db]) {
    for (let tries = 0; tries < 50; tries++) {
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      if (result?.busy === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  const sizes = [fileSize(store.db.name), fileSize(rawPath)] as const;
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
      `${int(count)} turns each, one awaited call (one IMMEDIATE transaction) per turn, into ` +
        `two fresh files side by side, ${int(CHUNK)} at a time, alternating which goes first; ` +
        `the store's default writer: on the calling thread while the file is free, on the ` +
        `writer thread when another connection holds the lock`,
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
      `both files hold the same ${int(count)} rows: ${sameRows ? 'yes' : 'NO'}; ` +
        `files after a checkpoint: store ${mib(sizes[0])}, raw ${mib(sizes[1])}`,
    ),
  );
  console.log(
    note(
      `the slowest 1% of calls take ${slowShare(storeTimes)}% of append's time and ` +
        `${slowShare(rawTimes)}% of raw's (WAL checkpoints run on the store's worker thread)`,
    ),
  );
  return ratio >= 0.8;
}

/**
 * Appends `turns` through the store with autocheckpoints off and prints how many WAL pages
 * one append writes.
 */
export async function measureWalPerAppend(
  store: SqliteConversationStore,
  turns: readonly NewMessage[],
): Promise<void> {
  const db = store.db;
  const previous = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.pragma('wal_autocheckpoint = 0');
  try {
    for (const turn of turns) await store.append(turn);
    // PASSIVE reports the frames in the WAL; TRUNCATE would report 0 after emptying it.
    const [result] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
    db.pragma('wal_checkpoint(TRUNCATE)');
    const pages = (result?.log ?? 0) / turns.length;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    console.log(
      note(
        `each append writes ${pages.toFixed(1)} pages (${int((pages * pageSize) / 1024)} KiB) ` +
          `to the WAL (measured over ${int(turns.length)} more appends)`,
      ),
    );
  } finally {
    db.pragma(`wal_autocheckpoint = ${previous}`);
  }
}

/** Writes `count` more turns quickly, in batched transactions, and says so. */
export function fill(db: Database.Database, corpus: Corpus, count: number): void {
  const batch = handWrittenBatch(db);
  const start = performance.now();
  for (let done = 0; done < count; done += FILL_BATCH) {
    batch(corpus.take(Math.min(FILL_BATCH, count - done)));
  }
  const fillMs = performance.now() - start;
  console.log(
    note(
      `filled the other ${int(count)} turns with the hand-written inserts in ` +
        `${int(FILL_BATCH)}-turn transactions (not capture's pattern, only to build the ` +
        `database): ${(fillMs / 1000).toFixed(1)} s, ${perSecond(count, fillMs)} with generating the text`,
    ),
  );
}

/** JIT warm-up of both writers on throwaway in-memory databases. */
export async function warmUpWriters(corpus: Corpus): Promise<void> {
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

/** Bytes of a database file and its WAL. */
export function fileSize(path: string): number {
  return [path, `${path}-wal`].reduce((n, p) => n + (existsSync(p) ? statSync(p).size : 0), 0);
}

export function removeDb(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal'])
    rmSync(`${path}${suffix}`, { force: true });
}

/** Share (in %) of the total time spent in the slowest 1% of calls. */
function slowShare(samples: Float64Array): number {
  const sorted = Float64Array.from(samples).sort();
  const cut = Math.floor(sorted.length * 0.99);
  let slow = 0;
  let total = 0;
  sorted.forEach((value, i) => {
    total += value;
    if (i >= cut) slow += value;
  });
  return Math.round((slow / total) * 100);
}

function describePragmas(db: Database.Database): string {
  const get = (name: string) => String(db.pragma(name, { simple: true }));
  return (
    `journal_mode=${get('journal_mode')} synchronous=${get('synchronous')} ` +
    `foreign_keys=${get('foreign_keys')} cache_size=${get('cache_size')} ` +
    `temp_store=${get('temp_store')}`
  );
}

function countRows(db: Database.Database): number {
  return db.prepare('SELECT count(*) FROM messages').pluck().get() as number;
}
