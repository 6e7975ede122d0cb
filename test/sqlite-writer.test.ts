import { mkdtempSync, rmSync, statSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { StoreError, type NewMessage } from 'colloquy';
import { SqliteConversationStore, type SqliteStoreOptions } from 'colloquy/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toInsert } from '../db/rows.js';
import { commitBatch } from '../db/batch.js';
import { InlineWriter, ThreadWriter, startWriterThread } from '../db/writer.js';
import { type AppendInput, StoreWrites } from '../db/writes.js';
import { WAL_LIMIT } from '../db/thread-options.js';
import { type Call, SLEEP_AFTER_MS } from '../db/writer-protocol.js';
import { configureConnection } from '../db/pragmas.js';

// The SQLite store's writes run on a worker thread with a connection of its own (db/writer.ts).

let dir: string;
let open: SqliteConversationStore[];
let connections: Database.Database[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'colloquy-writer-'));
  open = [];
  connections = [];
});
afterEach(async () => {
  for (const db of connections) db.close();
  for (const store of open) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function storeAt(options: Partial<SqliteStoreOptions> = {}) {
  const store = new SqliteConversationStore({ path: join(dir, 'colloquy.db'), ...options });
  open.push(store);
  return store;
}

let n = 0;
function turn(channelId = 'C1', fields: Partial<NewMessage> = {}): NewMessage {
  n++;
  return {
    id: `m-${n}`,
    conversationId: `slack:T1:${channelId}`,
    participant: { kind: 'user', id: 'slack:U1', displayName: 'Alice' },
    content: `turn ${n}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    scope: 'channel',
    metadata: { channelType: 'slack', channelId, messageId: `p-${n}`, mentions: [] },
    ...fields,
  };
}

/** What `append` hands the writer for a turn (the store's own flattening). */
function appendInput(t: NewMessage): AppendInput {
  return {
    row: toInsert(t, t.timestamp),
    kind: t.participant.kind,
    displayName: null,
    channelName: null,
    mentions: [],
  };
}

/** A writer thread's call appending `t`. */
function appendCall(id: number, t: NewMessage): Call {
  return { id, name: 'append', args: [appendInput(t)] };
}

/** The writer thread's code on a second connection to a migrated file, as the thread has it. */
function writerOnFile() {
  const store = storeAt({ writerThread: false, backgroundCheckpoints: false });
  const db = new Database(join(dir, 'colloquy.db'));
  configureConnection(db, { busyTimeoutMs: 5000, readonly: false });
  connections.push(db);
  return { store, db, writes: new StoreWrites(db) };
}

describe('SqliteConversationStore writer thread', () => {
  it('writes a file on the thread and `:memory:` (or writerThread: false) inline', async () => {
    expect(storeAt().writerMode).toBe('thread');
    const memory = new SqliteConversationStore({ path: ':memory:' });
    open.push(memory);
    expect(memory.writerMode).toBe('inline');
    const inline = new SqliteConversationStore({
      path: join(dir, 'inline.db'),
      writerThread: false,
    });
    open.push(inline);
    expect(inline.writerMode).toBe('inline');
    expect((await inline.append(turn())).inserted).toBe(true);
  });

  it('stores appends made at once by many callers, numbered in call order', async () => {
    // given a store on a file
    const store = storeAt();

    // when 200 turns over 4 channels are appended without waiting in between
    const turns = Array.from({ length: 200 }, (_, i) => turn(`C${i % 4}`));
    const results = await Promise.all(turns.map((t) => store.append(t)));

    // then all are stored, and their sequence numbers follow the order of the calls
    expect(results.every((r) => r.inserted)).toBe(true);
    const sequences = results.map((r) => Number(r.message.sequence));
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    const count = store.db.prepare('SELECT count(*) FROM messages').pluck().get();
    expect(count).toBe(200);
  });

  it('fails only the call that cannot be written when calls are committed together', async () => {
    // given a turn whose mention SQLite cannot bind, among good ones sent at once
    const store = storeAt();
    const bad = turn('C1');
    bad.metadata.mentions = [{ not: 'an id' } as unknown as string];
    const calls = [turn('C1'), bad, turn('C2'), turn('C3')].map((t) =>
      store.append(t).then(
        () => 'stored',
        (error: unknown) => error,
      ),
    );

    // when they are answered
    const [first, failed, ...rest] = await Promise.all(calls);

    // then the bad one fails for good with the reason, and the others are stored
    expect(failed).toBeInstanceOf(StoreError);
    expect((failed as StoreError).transient).toBe(false);
    expect((failed as StoreError).message).toMatch(/cannot append a turn/);
    expect([first, ...rest]).toEqual(['stored', 'stored', 'stored']);
    expect(await store.getMessage(bad.conversationId, bad.id)).toBeUndefined();
  });

  it('indexes the turns of a batch for search, with an edit and a delete of them in the batch', async () => {
    // given a batch of the writer thread's calls: turns, an edit of one of them and a delete
    // of another among them, in a conversation that had a turn before
    const { store, writes } = writerOnFile();
    await store.append(turn('C1', { content: 'the older parcel' }));
    const [edited, deleted, ...rest] = Array.from({ length: 40 }, (_, i) =>
      turn(`C${i % 3}`, { content: `parcel number ${i}` }),
    );
    const ref = { channelType: 'slack', channelId: edited!.metadata.channelId! };
    const edit = [
      { ...ref, messageId: edited!.metadata.messageId! },
      'a rewritten note',
      '2026-02-01T00:00:00Z',
    ];
    const calls: Call[] = [
      appendCall(1, edited!),
      appendCall(2, deleted!),
      { id: 3, name: 'recordEdit', args: edit },
      { id: 4, name: 'deleteMessages', args: [deleted!.conversationId, [deleted!.id]] },
      ...rest.map((t, i) => appendCall(5 + i, t)),
    ];

    // when they are committed together
    const answers = commitBatch(writes, calls);

    // then each call succeeded
    expect(answers.filter((a) => 'error' in a)).toEqual([]);
    expect(answers.slice(2, 4).map((a) => ('value' in a ? a.value : a))).toEqual([true, 1]);

    // then search finds every turn by its current words, once, and nothing is held back
    const found = async (conversationId: string, words: string) =>
      (await store.search(conversationId, words, { limit: 100 })).map((m) => m.id);
    expect(await found(edited!.conversationId, 'rewritten')).toEqual([edited!.id]);
    expect(await found(edited!.conversationId, 'number 0')).not.toContain(edited!.id);
    expect(await found(deleted!.conversationId, 'number 1')).not.toContain(deleted!.id);
    for (const t of rest) expect(await found(t.conversationId, t.content)).toContain(t.id);
    expect(await found('slack:T1:C1', 'older')).toHaveLength(1);
    const count = (sql: string) => store.db.prepare(sql).pluck().get();
    expect(count('SELECT count(*) FROM messages_fts_docsize')).toBe(
      count('SELECT count(*) FROM messages'),
    );
    expect(count('SELECT count(*) FROM messages_fts_pending')).toBe(0);
  });

  it('answers a repeated turn in a batch with the stored one, and stores the rest once', async () => {
    // given a stored turn, then the same turn again among new ones handed over at once
    const store = storeAt();
    const first = turn('C1');
    await store.append(first);
    const fresh = [turn('C1'), turn('C1'), turn('C2')];
    const calls = [fresh[0]!, first, fresh[1]!, fresh[2]!].map((t) =>
      store.append(t, { background: true }),
    );

    // when they are answered
    const results = await Promise.all(calls);

    // then the repeat is not stored again, and counts stay true (no upsert of it was kept)
    expect(results.map((r) => r.inserted)).toEqual([true, false, true, true]);
    expect(results[1]!.message.sequence).toBeLessThan(results[0]!.message.sequence!);
    const counts = store.db
      .prepare('SELECT id, message_count FROM conversations ORDER BY id')
      .raw()
      .all();
    expect(counts).toEqual([
      ['slack:T1:C1', 3],
      ['slack:T1:C2', 1],
    ]);
  });

  it('fails only the turn a full disk has no room for, in a batch', () => {
    // given the writer's code on a connection with room for small turns only
    const { db, writes } = writerOnFile();
    db.pragma(`max_page_count = ${(db.pragma('page_count', { simple: true }) as number) + 8}`);

    // when a batch holds a turn too big for the disk between two that fit
    const answers = commitBatch(writes, [
      appendCall(1, turn('C1', { content: 'fits' })),
      appendCall(2, turn('C1', { content: 'x'.repeat(100_000) })),
      appendCall(3, turn('C1', { content: 'fits too' })),
    ]);

    // then that one fails with the full disk, and the others are stored
    expect(answers.map((a) => ('error' in a ? a.error.message : 'stored'))).toEqual([
      'stored',
      'database or disk is full',
      'stored',
    ]);
    expect(db.prepare('SELECT count(*) FROM messages').pluck().get()).toBe(2);
  });

  it('stores none of a batch whose transaction SQLite rolled back, and says why for each', () => {
    // given a write that fails the way an I/O error does: SQLite rolls the whole
    // transaction back (not reproducible on demand, so the write does what SQLite would)
    const { db, writes } = writerOnFile();
    writes.recordDeletion = () => {
      db.exec('ROLLBACK');
      throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
    };
    const deletion = { channelType: 'slack', channelId: 'C1', messageId: 'p-0' };

    // when it is in a batch between two turns
    const answers = commitBatch(writes, [
      appendCall(1, turn('C1')),
      { id: 2, name: 'recordDeletion', args: [deletion, '2026-01-01T00:00:00Z'] },
      appendCall(3, turn('C1')),
    ]);

    // then every call is answered with that error, and none is stored: the turn after it did
    // not commit on its own outside the batch
    expect(answers.map((a) => ('error' in a ? a.error.message : 'stored'))).toEqual(
      Array(3).fill('disk I/O error'),
    );
    expect(db.prepare('SELECT count(*) FROM messages').pluck().get()).toBe(0);
  });

  it('refuses only the call that cannot cross to the thread', async () => {
    // given a turn holding a function where an id belongs, made in the same turn as good ones
    // and, as capture's are, handed to the thread
    const store = storeAt();
    const bad = turn('C1');
    bad.metadata.mentions = [(() => 'U2') as unknown as string];
    const calls = [turn('C2'), bad, turn('C3')].map((t) =>
      store.append(t, { background: true }).then(
        () => 'stored',
        (error: unknown) => error,
      ),
    );

    // when they are answered
    const [first, failed, last] = await Promise.all(calls);

    // then that one fails for good, saying why, and the others are stored
    expect(failed).toBeInstanceOf(StoreError);
    expect((failed as StoreError).transient).toBe(false);
    expect((failed as StoreError).message).toMatch(/cannot hand this append to the writer thread/);
    expect([first, last]).toEqual(['stored', 'stored']);
  });

  it("writes an awaited append on the caller's connection when the file is free, capture's on the thread", async () => {
    // given a store on a file nobody else is writing
    const store = storeAt();
    const changes = () => store.db.prepare('SELECT total_changes()').pluck().get() as number;
    const before = changes();

    // when one append is awaited and one is handed over as capture hands them
    await store.append(turn());
    const direct = changes();
    await store.append(turn(), { background: true });

    // then the first was written by the store's own connection, the second by the thread
    expect(direct).toBeGreaterThan(before);
    expect(changes()).toBe(direct);
    expect(await store.get('slack:T1:C1')).toHaveLength(2);
  });

  it("does not write an awaited append into a transaction opened on the store's connection", async () => {
    // given a transaction someone opened on store.db for raw SQL
    const store = storeAt();
    store.db.exec('BEGIN');

    // when an append is awaited meanwhile, and that transaction is then rolled back
    await store.append(turn());
    store.db.exec('ROLLBACK');

    // then the turn is still stored: it was written on its own, not inside that transaction
    expect(await store.get('slack:T1:C1')).toHaveLength(1);
  });

  it('does not let an awaited append overtake the writes queued for the thread', async () => {
    // given turns handed to the thread and not yet written
    const store = storeAt();
    const queued = [turn(), turn()].map((t) => store.append(t, { background: true }));

    // when an awaited append follows at once
    const last = store.append(turn());

    // then it is stored after them
    const results = await Promise.all([...queued, last]);
    const sequences = results.map((r) => r.message.sequence!);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
  });

  it('keeps the event loop free while another connection holds the write lock', async () => {
    // given another connection holding the file's write lock
    const store = storeAt({ busyTimeoutMs: 10_000 });
    await store.append(turn());
    const other = new Database(join(dir, 'colloquy.db'));
    other.exec('BEGIN IMMEDIATE');

    // when the store appends, and the event loop is asked to run a timer meanwhile
    let settled = false;
    const appended = store.append(turn()).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 50));

    // then the timer ran while the append still waits for the lock
    expect(settled).toBe(false);
    // and once the lock is released the append goes through
    other.exec('ROLLBACK');
    other.close();
    expect((await appended).inserted).toBe(true);
  });

  it('finishes the writes already asked for when it closes', async () => {
    // given 50 appends not yet answered
    const path = join(dir, 'colloquy.db');
    const store = new SqliteConversationStore({ path });
    const pending = Array.from({ length: 50 }, () => store.append(turn()));

    // when the store closes at once
    await store.close();

    // then every one was answered and is in the file
    expect((await Promise.all(pending)).every((r) => r.inserted)).toBe(true);
    const check = new Database(path, { readonly: true });
    expect(check.prepare('SELECT count(*) FROM messages').pluck().get()).toBe(50);
    check.close();
  });

  it('wakes the thread for background appends and for closing after it has slept', async () => {
    // given a store whose thread had nothing to do for longer than SLEEP_AFTER_MS
    const path = join(dir, 'colloquy.db');
    const store = new SqliteConversationStore({ path });
    await store.append(turn(), { background: true });
    await new Promise((resolve) => setTimeout(resolve, SLEEP_AFTER_MS + 200));

    // when capture hands it background appends, then the store closes
    const pending = Array.from({ length: 20 }, () => store.append(turn(), { background: true }));
    expect((await Promise.all(pending)).every((r) => r.inserted)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, SLEEP_AFTER_MS + 200));
    await store.close();

    // then every turn is in the file (a thread left asleep would hang either step)
    const check = new Database(path, { readonly: true });
    expect(check.prepare('SELECT count(*) FROM messages').pluck().get()).toBe(21);
    check.close();
  });

  it('starts the WAL over itself when it grows past the limit under writes', async () => {
    // given a writer thread with a 64 KiB WAL limit, and no checkpoint worker
    const path = join(dir, 'colloquy.db');
    const store = storeAt({ writerThread: false, backgroundCheckpoints: false });
    store.db.pragma('wal_autocheckpoint = 0');
    const writer = new ThreadWriter(path, 5000, () => new InlineWriter(store.db), 64 * 1024);
    const append = (t: NewMessage) => writer.run('append', appendInput(t));

    // when it writes past the limit, and writes again a second later
    await Promise.all(Array.from({ length: 300 }, () => append(turn())));
    const grown = statSync(`${path}-wal`).size;
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await append(turn());
    await writer.run(
      'recordDeletion',
      { channelType: 'slack', channelId: 'C1', messageId: 'x' },
      '2026-01-01T00:00:00Z',
    );

    // then the WAL was emptied between batches, and every turn is in the file
    expect(grown).toBeGreaterThan(64 * 1024);
    expect(statSync(`${path}-wal`).size).toBe(0);
    expect(store.db.prepare('SELECT count(*) FROM messages').pluck().get()).toBe(301);
    await writer.close();
  });

  it('carries on inline when the thread stops after it started, failing only what it held', async () => {
    // given a writer thread that has written a turn, and a turn handed to it since
    const path = join(dir, 'colloquy.db');
    const store = storeAt({ writerThread: false, backgroundCheckpoints: false });
    let worker: Worker | undefined;
    const writer = new ThreadWriter(
      path,
      5000,
      () => new InlineWriter(store.db),
      WAL_LIMIT,
      (data, port) => (worker = startWriterThread(data, port)),
    );
    const [first, held, later] = [turn(), turn(), turn()];
    await writer.run('append', appendInput(first));
    const warned = new Promise<Error>((resolve) => process.once('warning', resolve));
    const heldCall = writer.queue('append', appendInput(held)).catch((error: unknown) => error);
    await new Promise((resolve) => setImmediate(resolve)); // handed over, not yet answered

    // when the thread stops
    await worker!.terminate();

    // then the turn it held fails with a transient StoreError (capture retries it), a
    // warning says why, and later writes run inline
    const failed = await heldCall;
    expect(failed).toBeInstanceOf(StoreError);
    expect((failed as StoreError).transient).toBe(true);
    expect((failed as StoreError).message).toMatch(/writer thread stopped/);
    expect((await warned).message).toMatch(/writes on the main thread from now on/);
    expect(writer.mode).toBe('inline');
    await writer.run('append', appendInput(later));
    // and the retried turn is stored once, whether or not the thread had committed it
    await writer.run('append', appendInput(held));
    const ids = store.db.prepare('SELECT id FROM messages ORDER BY seq').pluck().all();
    expect(ids).toEqual(expect.arrayContaining([first.id, held.id, later.id]));
    expect(ids).toHaveLength(3);
    await writer.close();
  });

  it('carries on inline when the thread cannot open the file', async () => {
    // given a writer thread pointed at a file that does not exist, over a working connection
    const store = new SqliteConversationStore({ path: ':memory:' });
    open.push(store);
    const writer = new ThreadWriter(join(dir, 'missing', 'x.db'), 100, () => {
      return new InlineWriter(store.db);
    });

    const warned = new Promise<Error>((resolve) => process.once('warning', resolve));

    // when a write is asked for at once
    const outcome = await writer.run('deleteMessages', 'slack:T1:C1', ['m-1']);

    // then it ran on the fallback connection, and so does everything after
    expect(outcome).toBe(0);
    expect(writer.mode).toBe('inline');
    // and the process was warned, with the reason
    const warning = await warned;
    expect(warning).toMatchObject({ name: 'ColloquyWarning', code: 'COLLOQUY_WRITER_INLINE' });
    expect(warning.message).toMatch(/could not start \(.*directory does not exist/);
    await writer.close();
  });
});
