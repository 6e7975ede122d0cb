import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteConversationStore } from 'colloquy/sqlite';
import type { NewMessage } from 'colloquy';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FOLD_EVERY, FOLD_PARTICIPANTS_EVERY } from '../../../db/sqlite/schema.js';

/**
 * The `conversations` and `participants` views: stored tallies folded in every `FOLD_EVERY`
 * (conversations) and `FOLD_PARTICIPANTS_EVERY` (authors' times) turns, plus the turns past
 * them. Whatever the folds have reached, they read what the turns in `messages` say.
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

/** The views' tallies next to the same tallies counted from `messages` directly. */
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

/** How far the conversations' (or, with `participants`, the authors') tallies are folded. */
function folded(which: 'conversations' | 'participants' = 'conversations'): number {
  const key = which === 'conversations' ? 'messages_folded_seq' : 'participants_folded_seq';
  return Number(
    store.db.prepare(`SELECT value FROM colloquy_state WHERE key = ?`).pluck().get(key),
  );
}

/** The authors' times as stored, without the turns the view adds. */
function storedTimes() {
  return store.db
    .prepare(`SELECT id, first_seen_at, last_seen_at FROM participant_rows ORDER BY id`)
    .all() as { id: string; first_seen_at: string; last_seen_at: string }[];
}

describe('conversation and participant tallies', () => {
  it('read exactly before, across and after the folds, with turns out of order', async () => {
    // given turns in five conversations by seven people, timestamps not in arrival order
    const total = FOLD_PARTICIPANTS_EVERY + FOLD_EVERY / 2;
    const checks = [FOLD_EVERY - 2, FOLD_EVERY, FOLD_PARTICIPANTS_EVERY - 2, total - 1];
    let unfoldedTimes: { first_seen_at: string; last_seen_at: string }[] = [];
    for (let i = 0; i < total; i++) {
      const second = (i * 37) % 1000;
      await store.append(turn(i % 5, i % 7, second));
      if (checks.includes(i)) {
        // then at each point the views read what the turns say
        const now = tallies();
        expect(now.conversations).toEqual(now.counted);
        expect(now.participants).toEqual(now.seen);
      }
      if (i === FOLD_PARTICIPANTS_EVERY - 2) unfoldedTimes = storedTimes();
    }
    // and the conversations were folded every FOLD_EVERY turns, the authors' times only at the
    // FOLD_PARTICIPANTS_EVERY-th turn: until then each author's row kept their first turn's time
    expect(folded()).toBe(total - (total % FOLD_EVERY));
    expect(folded('participants')).toBe(FOLD_PARTICIPANTS_EVERY);
    expect(unfoldedTimes).toHaveLength(7);
    for (const row of unfoldedTimes) expect(row.last_seen_at).toBe(row.first_seen_at);
    const foldedTimes = store.db
      .prepare(
        `SELECT participant_id AS id, min(timestamp) AS first_seen_at,
           max(timestamp) AS last_seen_at
         FROM messages WHERE seq <= ? GROUP BY participant_id ORDER BY participant_id`,
      )
      .all(FOLD_PARTICIPANTS_EVERY);
    expect(storedTimes()).toEqual(foldedTimes);
  });

  it("folds turns inserted with plain SQL too, at the schema's cadences", async () => {
    // given a conversation and its author, and the fold triggers' cadences
    await store.append(turn(1, 1, 0));
    const trigger = store.db.prepare(`SELECT sql FROM sqlite_master WHERE name = ?`).pluck();
    expect(trigger.get('messages_fold_conversations')).toContain(`>= ${FOLD_EVERY}`);
    expect(trigger.get('messages_fold_participants')).toContain(`>= ${FOLD_PARTICIPANTS_EVERY}`);

    // when plain SQL inserts more than both folds' worth of turns
    const insert = store.db.prepare(`INSERT INTO messages (id, conversation_id, participant_id,
        content, timestamp, scope, channel_type, channel_id)
      VALUES (?, 'slack:T1:C1', 'slack:U1', 'x', ?, 'channel', 'slack', 'C1')`);
    for (let i = 1; i <= FOLD_PARTICIPANTS_EVERY + 3; i++) {
      insert.run(`raw-${i}`, new Date(Date.UTC(2026, 0, 2, 0, 0, i)).toISOString());
    }

    // then the tallies were folded up to the turn that made each due, and read exactly
    expect(folded()).toBe(FOLD_PARTICIPANTS_EVERY);
    expect(folded('participants')).toBe(FOLD_PARTICIPANTS_EVERY);
    const stored = store.db.prepare(`SELECT message_count FROM conversation_rows`).pluck().get();
    expect(stored).toBe(FOLD_PARTICIPANTS_EVERY);
    expect(storedTimes()).toEqual([
      {
        id: 'slack:U1',
        first_seen_at: '2026-01-01T00:00:00.000Z',
        last_seen_at: new Date(
          Date.UTC(2026, 0, 2, 0, 0, FOLD_PARTICIPANTS_EVERY - 1),
        ).toISOString(),
      },
    ]);
    const now = tallies();
    expect(now.conversations).toEqual(now.counted);
    expect(now.participants).toEqual(now.seen);
  });

  it('counts deletions on both sides of the fold', async () => {
    // given more turns than one fold takes
    for (let i = 0; i < FOLD_EVERY + 20; i++) await store.append(turn(i % 2, i % 3, i));
    // when folded and unfolded turns are deleted, and a whole conversation
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

    // when its first turn comes, then more than a fold
    await store.append(turn(7, 1, 30));
    const first = await store.getConversation('slack:T1:C7');
    for (let i = 0; i < FOLD_EVERY; i++) await store.append(turn(7, 1, 40 + i));
    const later = await store.getConversation('slack:T1:C7');

    // then it spans its turns from the first, before and after the fold
    expect(first).toMatchObject({
      messageCount: 1,
      firstMessageAt: '2026-01-01T00:00:30.000Z',
      lastMessageAt: '2026-01-01T00:00:30.000Z',
    });
    expect(later).toMatchObject({
      messageCount: FOLD_EVERY + 1,
      firstMessageAt: '2026-01-01T00:00:30.000Z',
    });
  });

  it('renames a person from their newest turn only, folded or not', async () => {
    // given Alice's turns, the newest not folded yet
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

  it('writes neither row for a turn by a known person in a known conversation', async () => {
    // given a conversation and its author, and a log of every write to their rows
    await store.append(turn(1, 1, 1));
    store.db.exec(`
      CREATE TEMP TABLE written (what TEXT);
      CREATE TEMP TRIGGER c_update AFTER UPDATE ON main.conversation_rows
        BEGIN INSERT INTO written VALUES ('conversation'); END;
      CREATE TEMP TRIGGER p_update AFTER UPDATE ON main.participant_rows
        BEGIN INSERT INTO written VALUES ('participant'); END;`);

    // when more turns come with nothing new about either
    for (let i = 2; i < 20; i++) await store.append(turn(1, 1, i));

    // then neither row was written
    expect(store.db.prepare(`SELECT what FROM written`).pluck().all()).toEqual([]);
  });

  it('recounts the tallies when the store opens a file that lost how far they were folded', async () => {
    // given turns on both sides of a fold, then colloquy_state cleared by hand
    const path = join(dir, 'colloquy.db');
    for (let i = 0; i < FOLD_EVERY + 30; i++) await store.append(turn(i % 3, i % 4, i));
    store.db.exec(`DELETE FROM colloquy_state`);
    await store.close();

    // when the store opens the file again
    store = new SqliteConversationStore({ path });

    // then the views read what the turns say again, and folding goes on from there
    const now = tallies();
    expect(now.conversations).toEqual(now.counted);
    expect(now.participants).toEqual(now.seen);
    expect(folded()).toBe(FOLD_EVERY + 30);
    expect(folded('participants')).toBe(FOLD_EVERY + 30);
    for (let i = 0; i < FOLD_EVERY; i++) await store.append(turn(i % 3, i % 4, 1000 + i));
    expect(folded()).toBe(2 * FOLD_EVERY + 30);
    const later = tallies();
    expect(later.conversations).toEqual(later.counted);
  });

  it("recounts the tallies when only the authors' fold record was lost", async () => {
    // given turns past the conversations' fold, then the authors' record deleted by hand
    const path = join(dir, 'colloquy.db');
    for (let i = 0; i < FOLD_EVERY + 30; i++) await store.append(turn(i % 3, i % 4, i));
    store.db.exec(`DELETE FROM colloquy_state WHERE key = 'participants_folded_seq'`);
    await store.close();

    // when the store opens the file again
    store = new SqliteConversationStore({ path });

    // then both records are back at the newest turn and the views read what the turns say
    expect(folded()).toBe(FOLD_EVERY + 30);
    expect(folded('participants')).toBe(FOLD_EVERY + 30);
    const now = tallies();
    expect(now.conversations).toEqual(now.counted);
    expect(now.participants).toEqual(now.seen);
  });

  it('takes writes through the views as the tables did', () => {
    // when plain SQL inserts, renames and deletes through the views
    store.db.exec(`
      INSERT INTO conversations (id, channel_type, channel_id, scope, created_at, last_message_at)
      VALUES ('slack:T1:C9', 'slack', 'C9', 'channel', '2026-01-01', '2026-01-01');
      INSERT INTO participants (id, kind, display_name, first_seen_at, last_seen_at)
      VALUES ('slack:U9', 'user', 'Nine', '2026-01-01', '2026-01-01');
      UPDATE conversations SET title = 'ops' WHERE id = 'slack:T1:C9';
      UPDATE participants SET display_name = 'Niner' WHERE id = 'slack:U9';`);
    const conversation = store.db
      .prepare(`SELECT title, message_count, number FROM conversations`)
      .get();
    const person = store.db.prepare(`SELECT display_name FROM participants`).pluck().get();
    store.db.exec(`DELETE FROM conversations; DELETE FROM participants;`);

    // then each reached the stored rows
    expect(conversation).toEqual({ title: 'ops', message_count: 0, number: 1 });
    expect(person).toBe('Niner');
    expect(store.db.prepare(`SELECT count(*) FROM conversation_rows`).pluck().get()).toBe(0);
    expect(store.db.prepare(`SELECT count(*) FROM participant_rows`).pluck().get()).toBe(0);
  });
});
