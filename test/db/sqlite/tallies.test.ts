import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteConversationStore } from 'colloquy/sqlite';
import type { NewMessage } from 'colloquy';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/**
 * The tallies of `conversations` (turn count, first and latest times) and `participants`
 * (first and latest times): kept by triggers on `messages`, they read what the turns say
 * however the turns were written.
 */

let dir: string;
let store: SqliteConversationStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'colloquy-tallies-'));
  store = new SqliteConversationStore({ path: join(dir, 'colloquy.db') });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function turn(conversation: number, author: number, second: number, name?: string): NewMessage {
  n++;
  return {
    id: `m-${n}`,
    conversationId: `slack:T1:C${conversation}`,
    participant: { kind: 'user', id: `slack:U${author}`, displayName: name ?? `User ${author}` },
    content: `turn ${n}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString(),
    scope: 'channel',
    metadata: { channelType: 'slack', channelId: `C${conversation}`, messageId: `p-${n}` },
  };
}

/** The stored tallies next to the same tallies counted from `messages` directly. */
function tallies() {
  const db = store.db;
  return {
    conversations: db
      .prepare(
        `SELECT id, message_count, created_at, last_message_at FROM conversations ORDER BY id`,
      )
      .all(),
    counted: db
      .prepare(
        `SELECT conversation_id AS id, count(*) AS message_count, min(timestamp) AS created_at,
           max(timestamp) AS last_message_at
         FROM messages GROUP BY conversation_id ORDER BY conversation_id`,
      )
      .all(),
    participants: db
      .prepare(`SELECT id, first_seen_at, last_seen_at FROM participants ORDER BY id`)
      .all(),
    seen: db
      .prepare(
        `SELECT participant_id AS id, min(timestamp) AS first_seen_at,
           max(timestamp) AS last_seen_at
         FROM messages GROUP BY participant_id ORDER BY participant_id`,
      )
      .all(),
  };
}

describe('conversation and participant tallies', () => {
  it('read exactly after every turn, with turns out of order', async () => {
    // given turns in five conversations by seven people, timestamps not in arrival order
    for (let i = 0; i < 300; i++) {
      await store.append(turn(i % 5, i % 7, (i * 37) % 1000));
      if (i % 50 === 49) {
        // then at each point the tables say what the turns say
        const now = tallies();
        expect(now.conversations).toEqual(now.counted);
        expect(now.participants).toEqual(now.seen);
      }
    }
  });

  it('counts turns inserted and deleted with plain SQL too', async () => {
    // given a conversation and its author
    await store.append(turn(1, 1, 0));

    // when plain SQL inserts turns, then deletes some
    const insert = store.db.prepare(`INSERT INTO messages (id, conversation_id, participant_id,
        content, timestamp, scope, channel_type, channel_id)
      VALUES (?, 'slack:T1:C1', 'slack:U1', 'x', ?, 'channel', 'slack', 'C1')`);
    for (let i = 1; i <= 40; i++) {
      insert.run(`raw-${i}`, new Date(Date.UTC(2026, 0, 2, 0, 0, i)).toISOString());
    }
    store.db.exec(`DELETE FROM messages WHERE id IN ('raw-40', 'raw-39', 'raw-3')`);

    // then the tallies read what is left
    const now = tallies();
    expect(now.conversations).toEqual(now.counted);
    expect(now.participants).toEqual(
      (now.seen as object[]).map((p) => ({ ...p, last_seen_at: raw(40) })),
    );
    expect((await store.getConversation('slack:T1:C1'))?.messageCount).toBe(38);
  });

  it('follows turns given another time, the newest moved earlier too', async () => {
    // given turns in two conversations by three people, second i by person i % 3
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const next = turn(i % 2, i % 3, i);
      ids.push(next.id);
      await store.append(next);
    }
    const retime = store.db.prepare(`UPDATE messages SET timestamp = ? WHERE id = ?`);
    const second = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
    const earliest = new Date(Date.UTC(2025, 11, 31)).toISOString();

    // when the first turn moves later than all, and the newest (C1's) moves earliest
    retime.run(raw(5), ids[0]);
    retime.run(earliest, ids[29]);

    // then the conversations span the turns as they stand, and the authors' times take the
    // new times while keeping the ones captured before
    const now = tallies();
    expect(now.conversations).toEqual(now.counted);
    expect(now.participants).toEqual([
      { id: 'slack:U0', first_seen_at: second(0), last_seen_at: raw(5) },
      { id: 'slack:U1', first_seen_at: second(1), last_seen_at: second(28) },
      { id: 'slack:U2', first_seen_at: earliest, last_seen_at: second(29) },
    ]);
  });

  it('counts deletions through the store', async () => {
    // given turns in two conversations
    for (let i = 0; i < 60; i++) await store.append(turn(i % 2, i % 3, i));
    // when turns are deleted, one of them the newest, and a whole conversation
    const ids = store.db
      .prepare(`SELECT id FROM messages WHERE conversation_id = 'slack:T1:C0' AND seq % 5 = 0`)
      .pluck()
      .all() as string[];
    expect(await store.deleteMessages('slack:T1:C0', ids)).toBe(ids.length);
    await store.append(turn(2, 9, 5000));
    await store.deleteConversation('slack:T1:C1');

    // then the tallies still read what is left
    const now = tallies();
    expect(now.conversations).toEqual(now.counted);
    expect(await store.getConversation('slack:T1:C1')).toBeUndefined();
    const left = store.db
      .prepare(`SELECT count(*) FROM messages WHERE conversation_id = 'slack:T1:C0'`)
      .pluck()
      .get();
    expect((await store.getConversation('slack:T1:C0'))?.messageCount).toBe(left);
  });

  it('starts a created conversation at its first turn', async () => {
    // given a conversation created empty
    await store.createConversation({
      id: 'slack:T1:C7',
      channelType: 'slack',
      channelId: 'C7',
      scope: 'channel',
    });
    const created = await store.getConversation('slack:T1:C7');
    expect(created?.messageCount).toBe(0);

    // when its first turn comes, then more
    await store.append(turn(7, 1, 30));
    const first = await store.getConversation('slack:T1:C7');
    for (let i = 0; i < 10; i++) await store.append(turn(7, 1, 40 + i));
    const later = await store.getConversation('slack:T1:C7');

    // then it spans its turns from the first
    expect(first).toMatchObject({
      messageCount: 1,
      firstMessageAt: '2026-01-01T00:00:30.000Z',
      lastMessageAt: '2026-01-01T00:00:30.000Z',
    });
    expect(later).toMatchObject({
      messageCount: 11,
      firstMessageAt: '2026-01-01T00:00:30.000Z',
      lastMessageAt: '2026-01-01T00:00:49.000Z',
    });
  });

  it('renames a person from their newest turn only', async () => {
    // given Alice's turns
    await store.append(turn(1, 1, 100, 'Alice'));
    await store.append(turn(1, 1, 200, 'Alice'));

    // when a late turn from before them carries an older name, then a newer one a new name
    await store.append(turn(1, 1, 150, 'Alicia (old)'));
    const kept = store.db
      .prepare(`SELECT display_name FROM participants WHERE id = 'slack:U1'`)
      .pluck()
      .get();
    await store.append(turn(1, 1, 300, 'Alice B.'));
    const renamed = store.db
      .prepare(`SELECT display_name FROM participants WHERE id = 'slack:U1'`)
      .pluck()
      .get();

    // then the late turn did not rename her and the newer one did
    expect(kept).toBe('Alice');
    expect(renamed).toBe('Alice B.');
  });
});

function raw(second: number): string {
  return new Date(Date.UTC(2026, 0, 2, 0, 0, second)).toISOString();
}
