import type Database from 'better-sqlite3';
import type { NewMessage } from '../../src/types.js';

/**
 * The baselines: what an expert would hand-write with prepared better-sqlite3 statements on
 * the same schema, triggers and pragmas, without going through the store.
 */

/**
 * Many turns per transaction, for filling a database fast (not what capture does). The
 * generated turns are unique, so a duplicate fails the whole batch.
 *
 * @example
 * ```ts
 * handWrittenBatch(db)(turns);
 * ```
 */
export function handWrittenBatch(db: Database.Database): (turns: readonly NewMessage[]) => void {
  const write = handWrittenWrite(db);
  return db.transaction((turns: readonly NewMessage[]) => {
    for (const turn of turns) write(turn);
  });
}

function handWrittenWrite(db: Database.Database): (turn: NewMessage) => void {
  // The conversation's and author's rows are written when new or changed; the triggers on
  // `messages` keep their tallies.
  const participant = db.prepare(
    `INSERT INTO participants (id, kind, display_name, first_seen_at, last_seen_at)
     VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET display_name = excluded.display_name
     WHERE excluded.display_name IS NOT NULL AND excluded.display_name IS NOT display_name`,
  );
  const conversation = db.prepare(
    `INSERT INTO conversations (id, channel_type, channel_id, channel_name, thread_id, scope,
       created_at, last_message_at, message_count)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)
     ON CONFLICT (id) DO NOTHING`,
  );
  const message = db.prepare(
    `INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, scope,
       channel_type, channel_id, thread_id, platform_message_id, reply_to_message_id,
       reply_to_participant_id, metadata)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT DO NOTHING`,
  );
  const mention = db.prepare(
    `INSERT OR IGNORE INTO message_mentions (message_seq, conversation_id, participant_id, timestamp)
     VALUES (?, ?, ?, ?)`,
  );
  return (turn) => {
    const { participant: who, metadata: meta, timestamp } = turn;
    participant.run(who.id, who.kind, who.displayName ?? null, timestamp, timestamp);
    conversation.run(
      turn.conversationId,
      meta.channelType,
      meta.channelId,
      meta.channelName ?? null,
      meta.threadId ?? null,
      turn.scope,
      timestamp,
      timestamp,
    );
    const inserted = message.run(
      turn.id,
      turn.conversationId,
      who.id,
      turn.content,
      timestamp,
      turn.scope,
      meta.channelType,
      meta.channelId,
      meta.threadId ?? null,
      meta.messageId ?? null,
      meta.replyToMessageId ?? null,
      meta.replyToParticipantId ?? null,
      meta.channelName === undefined ? '{}' : JSON.stringify({ channelName: meta.channelName }),
    );
    if (inserted.changes === 0) throw new Error(`turn ${turn.id} is stored already`);
    for (const mentioned of meta.mentions ?? []) {
      mention.run(inserted.lastInsertRowid, turn.conversationId, mentioned, timestamp);
    }
  };
}

/**
 * The newest `limit` turns of a conversation as plain rows (no mapping to `StoredMessage`),
 * walking the same index as `store.get`.
 */
export function handWrittenNewest(db: Database.Database): (conversationId: string) => unknown[] {
  const select = db.prepare(
    `SELECT m.seq, m.id, m.participant_id, p.kind, p.display_name, m.content, m.timestamp,
       m.scope, m.platform_message_id, m.reply_to_participant_id, m.metadata
     FROM messages m JOIN participants p ON p.id = m.participant_id
     WHERE m.conversation_id = ? AND m.is_summary = 0 AND m.deleted_at IS NULL
     ORDER BY m.timestamp DESC, m.seq DESC LIMIT 100`,
  );
  return (conversationId) => select.all(conversationId);
}

/**
 * The newest 100 turns of a conversation with every field `store.get` returns (the message's
 * columns, its author's kind and name, its mentions): the same query as the store's, written
 * by hand, its rows as value arrays (better-sqlite3's `raw`, its cheapest way to return them).
 */
export function handWrittenNewestWhole(
  db: Database.Database,
): (conversationId: string) => unknown[] {
  const select = db
    .prepare(
      `SELECT m.*, p.kind, p.display_name,
       (SELECT json_group_array(mm.participant_id) FROM message_mentions mm
        WHERE mm.message_seq = m.seq) AS mentions
     FROM messages m JOIN participants p ON p.id = m.participant_id
     WHERE m.conversation_id = ? AND m.is_summary = 0 AND m.deleted_at IS NULL
     ORDER BY m.timestamp DESC, m.seq DESC LIMIT 100`,
    )
    .raw();
  return (conversationId) => select.all(conversationId);
}

/**
 * The search baseline: every turn of the conversation tested with `content LIKE '%word%'`
 * (any of the words), the newest 10 matches returned. The ORDER BY is on `seq` alone, so
 * SQLite reads the whole conversation rather than stopping at the first 10 hits, as a
 * relevance-ranked answer must.
 */
export function likeScan(
  db: Database.Database,
  wordCount: number,
): (conversationId: string, words: readonly string[]) => unknown[] {
  const any = Array.from({ length: wordCount }, () => 'm.content LIKE ?').join(' OR ');
  const select = db.prepare(
    `SELECT m.seq, m.id, m.participant_id, m.content, m.timestamp
     FROM messages m
     WHERE m.conversation_id = ? AND m.is_summary = 0 AND m.deleted_at IS NULL AND (${any})
     ORDER BY m.seq DESC LIMIT 10`,
  );
  return (conversationId, words) => select.all(conversationId, ...words.map((word) => `%${word}%`));
}
