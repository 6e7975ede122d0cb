import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SqliteConversationStore } from '../../db/sqlite/index.js';
import type { Corpus } from './corpus.js';
import { handWrittenInsert } from './raw.js';
import { note, perSecond } from './report.js';
import { removeDb } from './store-write.js';

/**
 * Where `append`'s time goes, on fresh files side by side: capture's batches (`commit` of
 * `CHUNK` ops, one transaction), awaited appends one at a time, and the hand-written inserts.
 */
export async function measureAppendModes(corpus: Corpus, dir: string, count: number) {
  const paths = ['batch', 'single', 'raw'].map((name) => join(dir, `modes-${name}.db`));
  paths.forEach(removeDb);
  const [batch, single, raw] = paths.map((path) => new SqliteConversationStore({ path }));
  const insert = handWrittenInsert(raw!.db);
  const ms = { batch: 0, single: 0, raw: 0 };
  const CHUNK = 100;
  for (let done = 0; done < count; done += CHUNK) {
    const turns = corpus.take(Math.min(CHUNK, count - done));
    let start = performance.now();
    await batch!.commit(turns.map((message) => ({ kind: 'append', message })));
    ms.batch += performance.now() - start;
    start = performance.now();
    for (const turn of turns) await single!.append(turn);
    ms.single += performance.now() - start;
    start = performance.now();
    for (const turn of turns) insert(turn);
    ms.raw += performance.now() - start;
  }
  for (const store of [batch, single, raw]) await store!.close();
  paths.forEach(removeDb);
  const rate = (m: number) => perSecond(count, m);
  const share = (m: number) => `${Math.round((ms.raw / m) * 100)}% of raw`;
  console.log(
    note(
      `where append's time goes (${count.toLocaleString('en')} more turns each, fresh files): ` +
        `capture's batches of ${CHUNK} (one commit each) ${rate(ms.batch)} (${share(ms.batch)}); ` +
        `awaited appends one at a time ${rate(ms.single)} (${share(ms.single)}); ` +
        `raw one commit each ${rate(ms.raw)}`,
    ),
  );
}
