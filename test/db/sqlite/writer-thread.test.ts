import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewMessage, StoreOperation } from 'colloquy';
import { StoreError } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// `writerThread: true` (a bot's default store): capture's batches are committed on a thread of
// their own with a second connection; the answers are the same as inline.

let dir: string;
let open: SqliteConversationStore[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'colloquy-writer-'));
  open = [];
});
afterEach(async () => {
  for (const store of open) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function storeAt(options: { busyTimeoutMs?: number } = {}): SqliteConversationStore {
  const store = SqliteConversationStore.open({
    path: join(dir, 'colloquy.db'),
    writerThread: true,
    ...options,
  });
  open.push(store);
  return store;
}

let n = 0;
function turn(channelId = 'C1'): NewMessage {
  n++;
  return {
    id: `m-${n}`,
    conversationId: `slack:T1:${channelId}`,
    participant: { kind: 'user', id: 'slack:U1', displayName: 'Alice' },
    content: `turn ${n}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    scope: 'channel',
    metadata: { channelType: 'slack', channelId, messageId: `p-${n}`, mentions: [] },
  };
}

const append = (message: NewMessage): StoreOperation => ({ kind: 'append', message });

describe('SqliteConversationStore with a writer thread', () => {
  it('commits batches in order, visible to the store at once, repeats answered with the stored turn', async () => {
    const store = storeAt();
    const turns = Array.from({ length: 50 }, (_, i) => turn(`C${i % 3}`));
    const [first, second] = await Promise.all([
      store.commit(turns.slice(0, 25).map(append)),
      store.commit([...turns.slice(25), turns[0]!].map(append)),
    ]);
    const results = [...first!, ...second!];
    expect(results.map((r) => r.ok && (r.value as { inserted: boolean }).inserted)).toEqual([
      ...turns.map(() => true),
      false,
    ]);
    const sequences = results
      .slice(0, 50)
      .map((r) => (r.ok ? (r.value as { message: { sequence: number } }).message.sequence : 0));
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    const repeat = results[50];
    expect(repeat?.ok && (repeat.value as { message: NewMessage }).message.id).toBe(turns[0]!.id);
    expect(await store.get(turns[1]!.conversationId, { limit: 100 })).toHaveLength(17);
  });

  it('fails only the op that cannot be written, as a StoreError for good', async () => {
    const store = storeAt();
    const bad = turn();
    bad.metadata.mentions = [{ not: 'an id' } as unknown as string];
    const [ok, failed] = await store.commit([turn(), bad].map(append));
    expect(ok?.ok).toBe(true);
    expect(failed?.ok).toBe(false);
    if (failed?.ok === false) {
      expect(failed.error).toBeInstanceOf(StoreError);
      expect(failed.error.transient).toBe(false);
      expect(failed.error.message).toMatch(/cannot store append/);
    }
  });

  it("keeps the event loop free while another process's lock holds a commit, then fails it transiently", async () => {
    const store = storeAt({ busyTimeoutMs: 200 });
    await store.commit([append(turn())]);
    const other = SqliteConversationStore.open(join(dir, 'colloquy.db'));
    open.push(other);
    other.db.exec('BEGIN IMMEDIATE');
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const results = await store.commit([turn(), turn()].map(append));
    clearInterval(timer);
    other.db.exec('ROLLBACK');
    expect(ticks).toBeGreaterThan(0); // inline, the loop would have been blocked throughout
    expect(results.map((r) => !r.ok && r.error.transient)).toEqual([true, true]);
    expect((await store.commit([append(turn())]))[0]?.ok).toBe(true);
  });

  it('finishes the batches it was given before close resolves', async () => {
    const store = storeAt();
    const turns = Array.from({ length: 20 }, () => turn());
    const committing = store.commit(turns.map(append));
    await store.close();
    expect((await committing).every((r) => r.ok)).toBe(true);
    const again = SqliteConversationStore.open(join(dir, 'colloquy.db'));
    open.push(again);
    expect(again.db.prepare('SELECT count(*) FROM messages').pluck().get()).toBe(20);
  });
});
