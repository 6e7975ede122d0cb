import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteConversationStore } from 'colloquy/sqlite';
import type { NewMessage } from 'colloquy';
import { Checkpointer } from '../db/checkpointer.js';

const dirs: string[] = [];
function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-checkpoint-'));
  dirs.push(dir);
  return join(dir, 'bot.db');
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function turn(i: number): NewMessage {
  return {
    id: `t${i}`,
    conversationId: 'telegram:42',
    participant: { kind: 'user', id: 'telegram:1', displayName: 'Ada' },
    content: `message number ${i} about the order`.repeat(4),
    timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    scope: 'dm',
    metadata: { channelType: 'telegram', channelId: '42', messageId: String(i), mentions: [] },
  };
}

describe('SqliteConversationStore checkpoints', () => {
  it('copies the WAL into the file from a worker, not inside the capturing commit', async () => {
    // Given a store on a file, with its checkpoint worker running
    const path = tempPath();
    const store = new SqliteConversationStore({ path });
    await store.checkpoint();
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const before = statSync(path).size;

    // When many turns are captured (far past SQLite's 1,000-page automatic threshold)
    for (let i = 0; i < 600; i++) await store.append(turn(i));
    const walBefore = statSync(`${path}-wal`).size;
    expect(statSync(path).size).toBe(before); // nothing was checkpointed on this thread

    // Then a checkpoint on the worker moves the pages into the database file
    await store.checkpoint();
    expect(statSync(path).size).toBeGreaterThan(before);
    expect(walBefore).toBeGreaterThan(0);
    expect(await store.get('telegram:42', { limit: 1000 })).toHaveLength(600);
    await store.close();

    // And the file reopens with every turn
    const again = new SqliteConversationStore({ path, backgroundCheckpoints: false });
    expect((await again.getConversation('telegram:42'))?.messageCount).toBe(600);
    expect(again.db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    await again.close();
  });

  it('starts the WAL over once it grows past the limit', async () => {
    // Given a file whose WAL holds many pages, and a checkpointer with a small limit
    const path = tempPath();
    const options = { path, backgroundCheckpoints: false, writerThread: false };
    const store = new SqliteConversationStore(options);
    store.db.pragma('wal_autocheckpoint = 0');
    for (let i = 0; i < 300; i++) await store.append(turn(i));
    const walBefore = statSync(`${path}-wal`).size;
    const checkpointer = await Checkpointer.start(path, 60_000, 64 * 1024);

    // When it checkpoints
    await checkpointer.checkpoint();

    // Then the WAL, past the limit, is empty again, and every turn is in the file
    expect(walBefore).toBeGreaterThan(64 * 1024);
    expect(statSync(`${path}-wal`).size).toBe(0);
    await checkpointer.close();
    expect((await store.getConversation('telegram:42'))?.messageCount).toBe(300);
    await store.close();
  });

  it('keeps SQLite checkpointing by itself for an in-memory database', async () => {
    const store = new SqliteConversationStore({ path: ':memory:' });
    await store.append(turn(1));
    await store.checkpoint();
    expect(await store.get('telegram:42')).toHaveLength(1);
    await store.close();
  });
});

describe('SqliteConversationStore close', () => {
  it('leaves no file behind once closed, even straight after opening', async () => {
    // Given stores closed before their checkpoint worker could even start
    for (let i = 0; i < 5; i++) {
      const path = tempPath();
      const store = new SqliteConversationStore({ path });
      await store.append(turn(i));
      await store.close();

      // Then nothing writes beside the file any more: the folder can be removed at once
      const dir = join(path, '..');
      rmSync(dir, { recursive: true });
      expect(() => statSync(dir)).toThrow();
    }
  });
});
