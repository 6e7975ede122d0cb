import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SqliteConversationStore } from '../../db/index.js';
import type { Corpus } from './corpus.js';
import { handWrittenInsert } from './raw.js';
import { note, perSecond } from './report.js';
import { removeDb } from './store-write.js';

const CALLERS = 8;

/**
 * Where `append`'s time goes, on fresh files side by side: capture's appends (`background`,
 * on the writer thread) and `writerThread: false` one call at a time, capture's appends from
 * several callers at once (as under load: different channels' turns together), and the
 * hand-written inserts.
 */
export async function measureAppendModes(corpus: Corpus, dir: string, count: number) {
  const paths = ['thread', 'inline', 'callers', 'raw'].map((name) => join(dir, `modes-${name}.db`));
  paths.forEach(removeDb);
  const [thread, inline, callers, raw] = [
    new SqliteConversationStore({ path: paths[0]! }),
    new SqliteConversationStore({ path: paths[1]!, writerThread: false }),
    new SqliteConversationStore({ path: paths[2]! }),
    new SqliteConversationStore({ path: paths[3]! }),
  ];
  const insert = handWrittenInsert(raw!.db);
  const ms = { thread: 0, inline: 0, callers: 0, raw: 0 };
  const CHUNK = 2000;
  for (let done = 0; done < count; done += CHUNK) {
    const turns = corpus.take(Math.min(CHUNK, count - done));
    let start = performance.now();
    for (const turn of turns) await thread!.append(turn, { background: true });
    ms.thread += performance.now() - start;
    start = performance.now();
    for (const turn of turns) await inline!.append(turn);
    ms.inline += performance.now() - start;
    start = performance.now();
    let next = 0;
    const caller = async () => {
      while (next < turns.length) await callers!.append(turns[next++]!, { background: true });
    };
    await Promise.all(Array.from({ length: CALLERS }, caller));
    ms.callers += performance.now() - start;
    start = performance.now();
    for (const turn of turns) insert(turn);
    ms.raw += performance.now() - start;
  }
  for (const store of [thread, inline, callers, raw]) await store!.close();
  paths.forEach(removeDb);
  const rate = (m: number) => perSecond(count, m);
  const share = (m: number) => `${Math.round((ms.raw / m) * 100)}% of raw`;
  console.log(
    note(
      `where append's time goes (${count.toLocaleString('en')} more turns each, fresh files): ` +
        `capture's appends (background: true) one at a time on the writer thread ` +
        `${rate(ms.thread)} (${share(ms.thread)}: each call waits for the thread and back); ` +
        `writerThread: false ${rate(ms.inline)} (${share(ms.inline)}); ${CALLERS} callers of ` +
        `capture's appends at once ${rate(ms.callers)} (${share(ms.callers)}, committed ` +
        `together); raw ${rate(ms.raw)}`,
    ),
  );
}
