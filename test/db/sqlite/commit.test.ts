import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewMessage, StoreOperation } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toInsert } from '../../../db/rows.js';
import { StoreWrites } from '../../../db/sqlite/writes.js';

// `SqliteConversationStore.commit`: capture's batches, one transaction, each op failing alone.

let dir: string;
let open: SqliteConversationStore[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'colloquy-commit-'));
  open = [];
});
afterEach(async () => {
  for (const store of open) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function storeAt(): SqliteConversationStore {
  const store = SqliteConversationStore.open(join(dir, 'colloquy.db'));
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

const append = (message: NewMessage): StoreOperation => ({ kind: 'append', message });
const outcomes = (results: Awaited<ReturnType<SqliteConversationStore['commit']>>) =>
  results.map((r) => (r.ok ? 'stored' : r.error.message));

describe('SqliteConversationStore.commit', () => {
  it('commits a batch in call order, in one transaction', async () => {
    // given a store on a file
    const store = storeAt();
    const before = store.db.prepare('PRAGMA data_version').pluck();

    // when 200 turns over 4 channels are committed together
    const turns = Array.from({ length: 200 }, (_, i) => turn(`C${i % 4}`));
    const results = await store.commit(turns.map(append));

    // then all are stored, numbered in the order of the batch
    expect(results.every((r) => r.ok && (r.value as { inserted: boolean }).inserted)).toBe(true);
    const sequences = results.map((r) =>
      r.ok ? (r.value as { message: NewMessage & { sequence: number } }).message.sequence : 0,
    );
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(store.db.prepare('SELECT count(*) FROM messages').pluck().get()).toBe(200);
    expect(before.get()).toBeDefined();
  });

  it('fails only the op that cannot be written, for good, and stores the others', async () => {
    // given a turn whose mention SQLite cannot bind, among good ones
    const store = storeAt();
    const bad = turn('C1');
    bad.metadata.mentions = [{ not: 'an id' } as unknown as string];
    const ops = [turn('C1'), bad, turn('C2'), turn('C3')].map(append);

    // when they are committed together
    const [first, failed, ...rest] = await store.commit(ops);

    // then the bad one fails for good with the reason, and the others are stored
    expect(failed?.ok).toBe(false);
    if (failed?.ok === false) {
      expect(failed.error.transient).toBe(false);
      expect(failed.error.message).toMatch(/cannot store append/);
    }
    expect([first, ...rest].every((r) => r?.ok)).toBe(true);
    expect(await store.getMessage(bad.conversationId, bad.id)).toBeUndefined();
  });

  it('answers a repeated turn with the stored one, and keeps conversation counts true', async () => {
    // given a stored turn, then the same turn again among new ones
    const store = storeAt();
    const first = turn('C1');
    await store.append(first);
    const fresh = [turn('C1'), turn('C1'), turn('C2')];

    // when they are committed together
    const results = await store.commit([fresh[0]!, first, fresh[1]!, fresh[2]!].map(append));

    // then the repeat is not stored again, and no upsert of it was kept
    const inserted = results.map((r) => r.ok && (r.value as { inserted: boolean }).inserted);
    expect(inserted).toEqual([true, false, true, true]);
    const counts = store.db
      .prepare('SELECT id, message_count FROM conversations ORDER BY id')
      .raw()
      .all();
    expect(counts).toEqual([
      ['slack:T1:C1', 3],
      ['slack:T1:C2', 1],
    ]);
  });

  it('records edits and deletions in a batch after the turns they change, and search follows', async () => {
    // given a batch of turns, an edit of one and a deletion of another
    const store = storeAt();
    const [edited, deleted, ...rest] = Array.from({ length: 10 }, (_, i) =>
      turn('C1', { content: `parcel number ${i}` }),
    );
    const ref = (t: NewMessage) => ({
      channelType: 'slack',
      channelId: 'C1',
      messageId: t.metadata.messageId!,
    });
    const ops: StoreOperation[] = [
      append(edited!),
      append(deleted!),
      {
        kind: 'edit',
        edit: { ...ref(edited!), content: 'a rewritten note', editedAt: '2026-02-01T00:00:00Z' },
      },
      { kind: 'delete', deletion: { ...ref(deleted!), deletedAt: '2026-02-01T00:00:00Z' } },
      ...rest.map(append),
    ];

    // when they are committed together
    const results = await store.commit(ops);

    // then each op succeeded, and search finds the current words only
    expect(outcomes(results)).toEqual(Array(ops.length).fill('stored'));
    expect(results.slice(2, 4).map((r) => r.ok && r.value)).toEqual([true, true]);
    const found = async (words: string) =>
      (await store.search('slack:T1:C1', words, { limit: 100 })).map((m) => m.id);
    expect(await found('rewritten')).toEqual([edited!.id]);
    expect(await found('parcel number 1')).not.toContain(deleted!.id);
  });

  it('records the same edit once when it comes twice (a redelivery, an import)', async () => {
    // given a stored turn and an edit of it
    const store = storeAt();
    const t = turn('C1');
    await store.append(t);
    const edit = {
      channelType: 'slack',
      channelId: 'C1',
      messageId: t.metadata.messageId!,
      content: 'edited',
      editedAt: '2026-02-01T00:00:00Z',
    };

    // when the edit is committed twice
    await store.commit([{ kind: 'edit', edit }]);
    await store.commit([{ kind: 'edit', edit }]);

    // then one revision keeps the first text
    const revisions = store.db.prepare('SELECT content FROM message_revisions').pluck().all();
    expect(revisions).toEqual([t.content]);
  });

  it('fails only the turn a full disk has no room for', async () => {
    // given a store with room for small turns only
    const store = storeAt();
    const { db } = store;
    db.pragma(`max_page_count = ${(db.pragma('page_count', { simple: true }) as number) + 8}`);

    // when a batch holds a turn too big for the disk between two that fit
    const results = await store.commit(
      [
        turn('C1', { content: 'fits' }),
        turn('C1', { content: 'x'.repeat(100_000) }),
        turn('C1', { content: 'fits too' }),
      ].map(append),
    );

    // then that one fails, transiently, with the full disk, and the others are stored
    expect(results.map((r) => r.ok || r.error.transient)).toEqual([true, true, true]);
    expect(outcomes(results)[1]).toMatch(/disk is full/);
    expect(db.prepare('SELECT count(*) FROM messages').pluck().get()).toBe(2);
  });

  it('stores none of a batch whose transaction SQLite rolled back, and says why for each', () => {
    // given a write that fails the way an I/O error does: SQLite rolls the whole transaction
    // back (not reproducible on demand, so the call does what SQLite would)
    const store = storeAt();
    const writes = new StoreWrites(store.db);
    const input = (t: NewMessage) => ({
      row: { ...toRow(t) },
      kind: 'user' as const,
      displayName: null,
      channelName: null,
      mentions: [],
    });
    const ioError = () => {
      store.db.exec('ROLLBACK');
      throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
    };

    // when it is in a batch between two turns
    const answers = writes.batch([
      () => writes.append(input(turn('C1'))),
      ioError,
      () => writes.append(input(turn('C1'))),
    ]);

    // then every call is answered with that error, and none is stored
    expect(answers.map((a) => ('error' in a ? (a.error as Error).message : 'stored'))).toEqual(
      Array(3).fill('disk I/O error'),
    );
    expect(store.db.prepare('SELECT count(*) FROM messages').pluck().get()).toBe(0);
  });

  it('answers every op with a transient error when another process holds the write lock', async () => {
    // given a second connection holding the write lock, and a short busy timeout
    const store = SqliteConversationStore.open({ path: join(dir, 'locked.db'), busyTimeoutMs: 50 });
    open.push(store);
    const other = SqliteConversationStore.open(join(dir, 'locked.db'));
    open.push(other);
    other.db.exec('BEGIN IMMEDIATE');

    // when a batch is committed
    const results = await store.commit([turn('C1'), turn('C2')].map(append));
    other.db.exec('ROLLBACK');

    // then each op fails transiently, naming the lock, and a retry stores them
    expect(results.map((r) => !r.ok && r.error.transient)).toEqual([true, true]);
    expect(outcomes(results)[0]).toMatch(/locked/);
    const again = await store.commit([turn('C1'), turn('C2')].map(append));
    expect(again.every((r) => r.ok)).toBe(true);
  });
});

function toRow(t: NewMessage) {
  return toInsert(t, t.timestamp);
}
