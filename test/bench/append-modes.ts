import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SqliteConversationStore } from '../../db/index.js';
import type { Corpus } from './corpus.js';
import { handWrittenInsert } from './raw.js';
import { note, perSecond } from './report.js';
import { removeDb } from './store-write.js';

/**
 * Where `append`'s time goes, on fresh files side by side: capture's appends (`background`,
 * on the writer thread) handed over a chunk at a time without waiting for each, as capture
 * does under load; `writerThread: false` one call at a time; and the hand-written inserts.
 * (A background append awaited on its own waits for the writer thread's next look, up to
 * 25 ms: nobody should, and capture does not.)
 */
export async function measureAppendModes(corpus: Corpus, dir: string, count: number) {
  const paths = ['thread', 'inline', 'raw'].map((name) => join(dir, `modes-${name}.db`));
  paths.forEach(removeDb);
  const [thread, inline, raw] = [
    new SqliteConversationStore({ path: paths[0]! }),
    new SqliteConversationStore({ path: paths[1]!, writerThread: false }),
    new SqliteConversationStore({ path: paths[2]! }),
  ];
  const insert = handWrittenInsert(raw!.db);
  const ms = { thread: 0, inline: 0, raw: 0 };
  const CHUNK = 500;
  for (let done = 0; done < count; done += CHUNK) {
    const turns = corpus.take(Math.min(CHUNK, count - done));
    let start = performance.now();
    await Promise.all(turns.map((turn) => thread!.append(turn, { background: true })));
    ms.thread += performance.now() - start;
    start = performance.now();
    for (const turn of turns) await inline!.append(turn);
    ms.inline += performance.now() - start;
    start = performance.now();
    for (const turn of turns) insert(turn);
    ms.raw += performance.now() - start;
  }
  for (const store of [thread, inline, raw]) await store!.close();
  paths.forEach(removeDb);
  const rate = (m: number) => perSecond(count, m);
  const share = (m: number) => `${Math.round((ms.raw / m) * 100)}% of raw`;
  console.log(
    note(
      `where append's time goes (${count.toLocaleString('en')} more turns each, fresh files): ` +
        `capture's appends (background: true), ${CHUNK} handed over at once as capture does ` +
        `under load, ${rate(ms.thread)} (${share(ms.thread)}, committed together on the writer ` +
        `thread, whose next look is up to 25 ms away); writerThread: false one at a time ` +
        `${rate(ms.inline)} (${share(ms.inline)}); raw ${rate(ms.raw)}`,
    ),
  );
}
