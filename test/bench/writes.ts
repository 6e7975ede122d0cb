import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { SqliteConversationStore } from '../../db/sqlite/index.js';
import { configureConnection } from '../../db/sqlite/pragmas.js';
import { Capture } from '../../src/capture.js';
import { silentLogger } from '../../src/logger.js';
import type { NewMessage } from '../../src/types.js';
import { Corpus } from './corpus.js';
import { handWrittenNewest } from './raw.js';
import { int, line, note, perSecond, verdict } from './report.js';
import type { Outcome } from './store.js';
import { fileSize, removeDb } from './store-write.js';

/**
 * Issue 12, part 4-5: the one write path against a hand-written lean schema (FTS5, mention
 * rows, a newest-N index, the same pragmas), side by side on fresh files.
 */
export async function benchWrites(options: { dir: string; turns?: number }): Promise<Outcome[]> {
  const { dir } = options;
  const prefill = options.turns ?? 20_000;
  const measured = 5000;
  console.log(`\n── Writes (issue 12): one write path against a hand-written lean schema ──`);
  const ourPath = join(dir, 'writes-store.db');
  const leanPath = join(dir, 'writes-lean.db');
  for (const path of [ourPath, leanPath]) removeDb(path);
  const corpus = new Corpus({ seed: 12 });
  const store = SqliteConversationStore.open(ourPath);
  const lean = leanSchema(leanPath);
  const outcomes: Outcome[] = [];
  try {
    // Both files hold the same history first, committed in batches of 500.
    for (let done = 0; done < prefill; done += 500) {
      const turns = corpus.take(500);
      await store.commit(turns.map((message) => ({ kind: 'append', message })));
      lean.batch(turns);
    }

    // 1. Awaited sequential appends, alternating blocks of 500.
    let oursMs = 0;
    let leanMs = 0;
    for (let done = 0, round = 0; done < measured; done += 500, round++) {
      const turns = corpus.take(500);
      const ours = async () => {
        const start = performance.now();
        for (const turn of turns) await store.append(turn);
        oursMs += performance.now() - start;
      };
      const theirs = () => {
        const start = performance.now();
        for (const turn of turns) lean.insert(turn);
        leanMs += performance.now() - start;
      };
      if (round % 2 === 0) {
        await ours();
        theirs();
      } else {
        theirs();
        await ours();
      }
    }
    const sequential = leanMs / oursMs;
    console.log(
      line(
        'awaited sequential appends',
        perSecond(measured, oursMs),
        `lean schema ${perSecond(measured, leanMs)}`,
        `${sequential.toFixed(2)}× (target ≥ 1.0×) ${verdict(sequential >= 1)}`,
      ),
    );
    outcomes.push({ label: 'sequential appends ≥ 1.0× lean schema', pass: sequential >= 1 });

    // 2. 100 concurrent awaited writes through capture (group commit).
    const capture = new Capture(store, { logger: silentLogger });
    const rounds = measured / 100;
    const start = performance.now();
    for (let r = 0; r < rounds; r++) {
      const turns = corpus.take(100);
      await Promise.all(turns.map((message) => capture.write({ kind: 'append', message })));
    }
    const concurrentMs = performance.now() - start;
    await capture.close(1000);
    const group = oursMs / concurrentMs;
    console.log(
      line(
        '100 concurrent awaited appends',
        perSecond(measured, concurrentMs),
        `sequential ${perSecond(measured, oursMs)}`,
        `${group.toFixed(1)}× (target ≥ 4×) ${verdict(group >= 4)}`,
      ),
    );
    console.log(
      note(`${int(rounds)} rounds of 100 capture.write calls made at once, each round awaited`),
    );
    outcomes.push({ label: '100 concurrent appends ≥ 4× sequential', pass: group >= 4 });

    // 3. WAL pages per single-turn commit.
    const oursPerCommit = await walPages(
      store.db,
      () => undefined,
      corpus.take(200),
      async (t) => {
        await store.append(t);
      },
    );
    const leanPerCommit = await walPages(
      lean.db,
      () => undefined,
      corpus.take(200),
      (t) => {
        lean.insert(t);
      },
    );
    console.log(
      line(
        'WAL pages per single-turn commit',
        oursPerCommit.toFixed(1),
        `lean schema ${leanPerCommit.toFixed(1)}`,
        `target ≤ 11 ${verdict(oursPerCommit <= 11)}`,
      ),
    );
    outcomes.push({ label: 'WAL pages per single-turn commit ≤ 11', pass: oursPerCommit <= 11 });

    // 4. get newest 100 against the same query hand-written on our schema.
    const newest = handWrittenNewest(store.db);
    const ids = corpus.conversationIds;
    let getMs = 0;
    let rawMs = 0;
    for (let i = 0; i < 100; i++) {
      await store.get(ids[i % ids.length]!, { limit: 100 });
      newest(ids[i % ids.length]!);
    }
    for (let i = 0; i < 2000; i++) {
      const id = ids[(i * 7) % ids.length]!;
      let t = performance.now();
      await store.get(id, { limit: 100 });
      getMs += performance.now() - t;
      t = performance.now();
      newest(id);
      rawMs += performance.now() - t;
    }
    const getRatio = getMs / rawMs;
    console.log(
      line(
        'get newest 100',
        `${((getMs / 2000) * 1000).toFixed(0)} µs/call`,
        `hand-written ${((rawMs / 2000) * 1000).toFixed(0)} µs/call`,
        `${getRatio.toFixed(2)}× (target ≤ 1.2×) ${verdict(getRatio <= 1.2)}`,
      ),
    );
    outcomes.push({ label: 'get newest 100 ≤ 1.2× hand-written', pass: getRatio <= 1.2 });

    // 5. bytes per stored turn (after a checkpoint).
    const total = prefill + measured * 2 + 400;
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    lean.db.pragma('wal_checkpoint(TRUNCATE)');
    const perTurn = fileSize(ourPath) / total;
    const leanPerTurn = fileSize(leanPath) / (prefill + measured + 200);
    console.log(
      line(
        'bytes per stored turn',
        int(perTurn),
        `lean schema ${int(leanPerTurn)}`,
        `target ≤ 450 ${verdict(perTurn <= 450)}`,
      ),
    );
    outcomes.push({ label: 'bytes per stored turn ≤ 450', pass: perTurn <= 450 });
  } finally {
    await store.close();
    lean.db.close();
  }

  // 6. RSS added by opening a store, in a fresh process: the store a bot opens by default
  // (with its writer thread), and one written on the event loop.
  const added = rssOfOpening(ourPath, true);
  const inline = rssOfOpening(ourPath, false);
  console.log(
    line(
      'RSS added by opening a store',
      `${added.toFixed(1)} MiB`,
      `without the writer thread ${inline.toFixed(1)} MiB`,
      `target ≤ 40 MiB ${verdict(added <= 40)}`,
    ),
  );
  console.log(
    note(
      `a fresh node process, the store's code loaded: RSS after opening the file (writerThread: ` +
        `true, as a bot's default store), one commit and one get, minus before`,
    ),
  );
  outcomes.push({ label: 'RSS added by opening a store ≤ 40 MiB', pass: added <= 40 });
  for (const path of [ourPath, leanPath]) removeDb(path);
  return outcomes;
}

async function walPages(
  db: Database.Database,
  _unused: () => void,
  turns: readonly NewMessage[],
  write: (turn: NewMessage) => Promise<void> | void,
): Promise<number> {
  db.pragma('wal_checkpoint(TRUNCATE)');
  const previous = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  db.pragma('wal_autocheckpoint = 0');
  try {
    for (const turn of turns) await write(turn);
    const [result] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
    db.pragma('wal_checkpoint(TRUNCATE)');
    return (result?.log ?? 0) / turns.length;
  } finally {
    db.pragma(`wal_autocheckpoint = ${previous}`);
  }
}

/** The baseline: what a person would write by hand for the same features. */
function leanSchema(path: string) {
  const db = new Database(path);
  configureConnection(db, { busyTimeoutMs: 5000, readonly: false });
  db.exec(`
    CREATE TABLE messages (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
      conversation_id TEXT NOT NULL, participant_id TEXT NOT NULL, content TEXT NOT NULL,
      timestamp TEXT NOT NULL, metadata TEXT);
    CREATE INDEX messages_newest ON messages (conversation_id, seq);
    CREATE TABLE mentions (seq INTEGER NOT NULL, participant_id TEXT NOT NULL,
      PRIMARY KEY (seq, participant_id)) WITHOUT ROWID;
    CREATE VIRTUAL TABLE messages_fts USING fts5(content, content = '', contentless_delete = 1);
  `);
  const message = db.prepare(
    `INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, metadata)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const fts = db.prepare('INSERT INTO messages_fts (rowid, content) VALUES (?, ?)');
  const mention = db.prepare('INSERT INTO mentions (seq, participant_id) VALUES (?, ?)');
  const write = (turn: NewMessage) => {
    const { lastInsertRowid } = message.run(
      turn.id,
      turn.conversationId,
      turn.participant.id,
      turn.content,
      turn.timestamp,
      JSON.stringify(turn.metadata),
    );
    fts.run(lastInsertRowid, turn.content);
    for (const who of turn.metadata.mentions ?? []) mention.run(lastInsertRowid, who);
  };
  const one = db.transaction(write);
  const many = db.transaction((turns: readonly NewMessage[]) => turns.forEach(write));
  return {
    db,
    insert: (turn: NewMessage) => one.immediate(turn),
    batch: (turns: readonly NewMessage[]) => many.immediate(turns),
  };
}

function rssOfOpening(path: string, writerThread: boolean): number {
  const module = fileURLToPath(new URL('../../db/sqlite/index.ts', import.meta.url));
  const script = `
    const { SqliteConversationStore } = await import(${JSON.stringify(module)});
    globalThis.gc?.();
    const before = process.memoryUsage().rss;
    const store = SqliteConversationStore.open({ path: ${JSON.stringify(path)}, writerThread: ${writerThread} });
    await store.commit([]);
    await store.get('x', { limit: 100 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = process.memoryUsage().rss;
    console.log((after - before) / 1048576);
    await store.close();`;
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script],
    {
      encoding: 'utf8',
    },
  );
  return Number(result.stdout.trim());
}
