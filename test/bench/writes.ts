import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { SqliteConversationStore } from '../../db/sqlite/index.js';
import { configureConnection } from '../../db/sqlite/pragmas.js';
import type { AgentRun } from '../../src/runs.js';
import type { StoreOperation } from '../../src/store.js';
import type { NewMessage } from '../../src/types.js';
import { buildGetQuery } from '../../db/queries.js';
import { SQLITE_DIALECT } from '../../db/sqlite/statements.js';
import { Corpus } from './corpus.js';
import { handWrittenNewest, handWrittenNewestWhole } from './raw.js';
import { int, line, note, perSecond, verdict } from './report.js';
import type { Outcome } from './store.js';
import { fileSize, removeDb } from './store-write.js';

/**
 * The one write path against a hand-written lean schema (FTS5, mention
 * rows, a newest-N index, the same pragmas), side by side on fresh files.
 */
export async function benchWrites(options: { dir: string; turns?: number }): Promise<Outcome[]> {
  const { dir } = options;
  const prefill = options.turns ?? 20_000;
  const measured = 10_000;
  console.log(`\n── Writes: one write path against a hand-written lean schema ──`);
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

    // 1 and 2. Awaited single appends, the lean schema's inserts, and batches of 100 appends
    // (one commit each: what capture hands the store under load), in rounds of 500 turns each,
    // the three in a rotating order. A guard holds when both the ratio of the totals (what a bot
    // pays, slow rounds included) and the median of the rounds' ratios (which a change in the
    // machine's speed between two blocks moves by one round) meet it: the lower is printed.
    const rounds = measured / 500;
    const timed = { ours: 0, lean: 0, batch: 0 };
    // CPU time of the same blocks: what is left of the wall time is waiting on the disk.
    const cpu = { ours: 0, lean: 0, batch: 0 };
    const sequentials: number[] = [];
    const batcheds: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const ms = { ours: 0, lean: 0, batch: 0 };
      const blocks: (() => Promise<void>)[] = [
        async () => {
          const turns = corpus.take(500);
          const start = performance.now();
          for (const turn of turns) await store.append(turn);
          ms.ours = performance.now() - start;
        },
        async () => {
          const turns = corpus.take(500);
          const start = performance.now();
          for (const turn of turns) lean.insert(turn);
          ms.lean = performance.now() - start;
        },
        async () => {
          const turns = corpus.take(500);
          const start = performance.now();
          for (let i = 0; i < 500; i += 100) {
            await store.commit(
              turns.slice(i, i + 100).map((message) => ({ kind: 'append', message })),
            );
          }
          ms.batch = performance.now() - start;
        },
      ];
      for (let k = 0; k < blocks.length; k++) {
        const index = (round + k) % blocks.length;
        const before = process.cpuUsage();
        await blocks[index]!();
        const used = process.cpuUsage(before);
        cpu[(['ours', 'lean', 'batch'] as const)[index]!] += (used.user + used.system) / 1000;
      }
      sequentials.push(ms.lean / ms.ours);
      batcheds.push(ms.ours / ms.batch);
      for (const key of ['ours', 'lean', 'batch'] as const) timed[key] += ms[key];
    }
    const sync = (db: Database.Database) =>
      ['OFF', 'NORMAL', 'FULL', 'EXTRA'][db.pragma('synchronous', { simple: true }) as number];
    console.log(
      note(
        `synchronous = ${sync(store.db)} on the store (its default), ${sync(lean.db)} on the ` +
          `lean schema (FULL: each commit synced to disk before it is answered)`,
      ),
    );
    const sequential = Math.min(timed.lean / timed.ours, medianOf(sequentials));
    console.log(
      line(
        'single appends',
        perSecond(measured, timed.ours),
        `lean schema ${perSecond(measured, timed.lean)}`,
        `${sequential.toFixed(2)}× (target ≥ 0.5×) ${verdict(sequential >= 0.5)}`,
      ),
    );
    outcomes.push({ label: 'single-turn appends ≥ 0.5× lean schema', pass: sequential >= 0.5 });
    const batched = Math.min(timed.ours / timed.batch, medianOf(batcheds));
    console.log(
      line(
        'batches of 100',
        perSecond(measured, timed.batch),
        `single appends ${perSecond(measured, timed.ours)}`,
        `${batched.toFixed(2)}× (target ≥ 2.5×) ${verdict(batched >= 2.5)}`,
      ),
    );
    console.log(
      note(
        `${int(measured)} turns each way in ${rounds} rounds of 500 (the batches: 5 store.commit ` +
          `calls of 100 append ops), the three blocks of a round in rotating order; each ratio is ` +
          `the lower of the totals' (${ratio(timed.lean, timed.ours)} and ` +
          `${ratio(timed.ours, timed.batch)}) and the median of the rounds' ` +
          `(${medianOf(sequentials).toFixed(2)}× and ${medianOf(batcheds).toFixed(2)}×; they ranged ` +
          `${range(sequentials)} and ${range(batcheds)})`,
      ),
    );
    outcomes.push({ label: 'a batch of 100 ≥ 2.5× single appends', pass: batched >= 2.5 });
    const microsPerTurn = (ms: number) => `${((ms / measured) * 1000).toFixed(0)} µs`;
    console.log(
      note(
        `a turn's CPU time: single appends ${microsPerTurn(cpu.ours)} (lean schema ` +
          `${microsPerTurn(cpu.lean)}), batches of 100 ${microsPerTurn(cpu.batch)}; the rest of ` +
          `the wall time waits on the disk: ${microsPerTurn(timed.ours - cpu.ours)} a single ` +
          `append (lean schema ${microsPerTurn(timed.lean - cpu.lean)}), ` +
          `${microsPerTurn(timed.batch - cpu.batch)} a turn in a batch`,
      ),
    );

    // 3. get newest 100 against the same query hand-written on our schema: every field the
    // store returns. A narrower select (11 of the columns, no mentions) is timed beside it.
    const whole = handWrittenNewestWhole(store.db);
    const narrow = handWrittenNewest(store.db);
    // The store's own statement run by hand (raw rows, no mapping): what the store adds on top.
    const own = store.db.prepare(buildGetQuery('x', { limit: 100 }, SQLITE_DIALECT).sql).raw();
    const ids = corpus.conversationIds;
    const spent = { get: 0, whole: 0, narrow: 0, own: 0 };
    const calls: [keyof typeof spent, (id: string) => unknown][] = [
      ['get', (id) => store.get(id, { limit: 100 })],
      ['whole', whole],
      ['narrow', narrow],
      ['own', (id) => own.all({ conversation: id, limit: 100 })],
    ];
    for (let i = 0; i < 100; i++) for (const [, call] of calls) await call(ids[i % ids.length]!);
    // Each call takes its turn going first: the first warms SQLite's page cache for the others,
    // on the same conversation.
    for (let i = 0; i < 2000; i++) {
      const id = ids[(i * 7) % ids.length]!;
      for (let k = 0; k < calls.length; k++) {
        const [name, call] = calls[(i + k) % calls.length]!;
        const t = performance.now();
        await call(id);
        spent[name] += performance.now() - t;
      }
    }
    const perCall = (ms: number) => `${((ms / 2000) * 1000).toFixed(0)} µs/call`;
    const getRatio = spent.get / spent.whole;
    console.log(
      line(
        'get newest 100',
        perCall(spent.get),
        `hand-written ${perCall(spent.whole)}`,
        `${getRatio.toFixed(2)}× (target ≤ 1.5×) ${verdict(getRatio <= 1.5)}`,
      ),
    );
    console.log(
      note(
        `the hand-written query returns every field store.get does (columns, author, mentions) ` +
          `as value arrays; the store's own statement run by hand the same way takes ` +
          `${perCall(spent.own)}, so store.get is ${(spent.own / spent.whole).toFixed(2)}× for ` +
          `its SQL and ${(spent.get / spent.own).toFixed(2)}× more for making StoredMessages; ` +
          `one selecting 11 of the columns and no mentions, as objects, takes ` +
          `${perCall(spent.narrow)}`,
      ),
    );
    outcomes.push({ label: 'get newest 100 ≤ 1.5× hand-written', pass: getRatio <= 1.5 });

    // 4. bytes per stored turn (after a checkpoint), each file over the turns it holds.
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    lean.db.pragma('wal_checkpoint(TRUNCATE)');
    const turnsIn = (db: Database.Database) =>
      db.prepare('SELECT count(*) FROM messages').pluck().get() as number;
    const perTurn = fileSize(ourPath) / turnsIn(store.db);
    const leanPerTurn = fileSize(leanPath) / turnsIn(lean.db);
    console.log(note(`bytes per stored turn: ${int(perTurn)}, lean schema ${int(leanPerTurn)}`));

    // 5. What an answered turn's writes cost, op by op, as the bot commits them.
    console.log(
      note(
        `an answered turn's commits, each awaited alone: ${await answeredTurnCost(store, corpus.take(500))}`,
      ),
    );
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

/**
 * The bot's commits for one answered turn, timed one by one: the turn with its pending run,
 * the run started, the reply recorded with its run, the confirmation with the run answered.
 */
async function answeredTurnCost(
  store: SqliteConversationStore,
  turns: readonly NewMessage[],
): Promise<string> {
  const steps = ['turn + run pending', 'run running', 'reply + run', 'confirm + run answered'];
  const spent = steps.map(() => 0);
  for (const turn of turns) {
    const now = new Date().toISOString();
    const pending: AgentRun = {
      id: `${turn.id}:agent`,
      messageId: turn.id,
      conversationId: turn.conversationId,
      agentId: 'agent',
      status: 'pending',
      createdAt: now,
      attempts: 0,
    };
    const running: AgentRun = { ...pending, status: 'running', startedAt: now, attempts: 1 };
    const replyId = `${pending.id}:reply`;
    const reply: NewMessage = {
      ...turn,
      id: replyId,
      participant: { kind: 'agent', id: 'agent' },
      content: `on it: ${turn.content.slice(0, 80)}`,
      metadata: {
        channelType: turn.metadata.channelType,
        channelId: turn.metadata.channelId,
        replyToParticipantId: turn.participant.id,
      },
    };
    const batches: StoreOperation[][] = [
      [
        { kind: 'append', message: turn },
        { kind: 'run', run: pending, create: true },
      ],
      [{ kind: 'run', run: running }],
      [
        { kind: 'run', run: { ...running, replyId } },
        { kind: 'reply', message: reply },
      ],
      [
        {
          kind: 'confirm',
          confirmation: {
            id: replyId,
            conversationId: turn.conversationId,
            messageIds: [`sent-${turn.id}`],
            delivery: 'sent',
          },
        },
        { kind: 'run', run: { ...running, replyId, status: 'answered', finishedAt: now } },
      ],
    ];
    for (const [i, ops] of batches.entries()) {
      const start = performance.now();
      const results = await store.commit(ops);
      spent[i]! += performance.now() - start;
      if (results.some((result) => !result.ok)) throw new Error(`${steps[i]} failed`);
    }
  }
  const total = spent.reduce((a, b) => a + b, 0);
  const each = steps.map(
    (step, i) => `${step} ${((spent[i]! / turns.length) * 1000).toFixed(0)} µs`,
  );
  return `${each.join(', ')}; ${((total / turns.length) * 1000).toFixed(0)} µs a turn`;
}

/** The lean schema's file and its two ways of writing: one turn a commit, or many. */
export interface LeanSchema {
  db: Database.Database;
  insert(turn: NewMessage): void;
  batch(turns: readonly NewMessage[]): void;
}

/** The baseline: what a person would write by hand for the same features. */
export function leanSchema(path: string): LeanSchema {
  const db = new Database(path);
  configureConnection(db, { busyTimeoutMs: 5000, readonly: false, durability: 'full' });
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

/** The median of `values`. */
function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** `0.52×`: how many times `a` is `b`. */
function ratio(a: number, b: number): string {
  return `${(a / b).toFixed(2)}×`;
}

/** `0.61–0.93×`: the lowest and highest of `values`. */
function range(values: readonly number[]): string {
  return `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}×`;
}
