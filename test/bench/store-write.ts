import { existsSync, rmSync, statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type Database from 'better-sqlite3';
import type { Corpus } from './corpus.js';
import { handWrittenBatch } from './raw.js';
import { int, note, perSecond } from './report.js';

const FILL_BATCH = 10_000;

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
      `filled ${int(count)} turns with the hand-written inserts in ` +
        `${int(FILL_BATCH)}-turn transactions (not capture's pattern, only to build the ` +
        `database): ${(fillMs / 1000).toFixed(1)} s, ${perSecond(count, fillMs)} with generating the text`,
    ),
  );
}

/** Bytes of a database file and its WAL. */
export function fileSize(path: string): number {
  return [path, `${path}-wal`].reduce((n, p) => n + (existsSync(p) ? statSync(p).size : 0), 0);
}

export function removeDb(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal'])
    rmSync(`${path}${suffix}`, { force: true });
}
