import type Database from 'better-sqlite3';
import type { MessageReaction, ReactionChange } from '../../src/reactions.js';
import { PART_IN_CHANNEL } from './statements.js';

/**
 * `message_reactions` in SQLite: a reaction added opens a row unless the same person's same
 * reaction is open on the turn already, or was removed after the addition's time (a
 * redelivered addition; at equal times the order of arrival decides, as Telegram dates
 * reactions in whole seconds); one removed closes the open row, unless that was added after it.
 *
 * @example
 * ```ts
 * const reactions = new SqliteReactions(db);
 * reactions.record({ ...ref, participantId: 'slack:U1', reaction: 'thumbsup', at }); // true
 * ```
 */
export class SqliteReactions {
  readonly #find;
  readonly #findPart;
  readonly #open;
  readonly #removedSince;
  readonly #add;
  readonly #remove;
  readonly #list;
  readonly record: (change: ReactionChange) => boolean;

  constructor(db: Database.Database) {
    this.#find = db.prepare<[string, string, string], { seq: number; id: string }>(
      `SELECT seq, id FROM messages
        WHERE channel_type = ? AND channel_id = ? AND platform_message_id = ?`,
    );
    this.#findPart = db.prepare<[string, string, string], { seq: number; id: string }>(
      `SELECT m.seq, m.id FROM messages m WHERE ${PART_IN_CHANNEL}`,
    );
    this.#open = db
      .prepare<[number, string, string], number>(
        `SELECT rowid FROM message_reactions WHERE message_seq = ? AND participant_id = ?
          AND reaction = ? AND removed_at IS NULL`,
      )
      .pluck();
    this.#removedSince = db
      .prepare<[number, string, string, string], number>(
        `SELECT 1 FROM message_reactions WHERE message_seq = ? AND participant_id = ?
          AND reaction = ? AND removed_at > ?`,
      )
      .pluck();
    this.#add = db.prepare(
      `INSERT INTO message_reactions (message_seq, message_id, participant_id, reaction, added_at)
        VALUES (?, ?, ?, ?, ?)`,
    );
    this.#remove = db.prepare(
      `UPDATE message_reactions SET removed_at = ? WHERE rowid = ? AND added_at <= ?`,
    );
    this.#list = db.prepare<[string, string], Row>(
      `SELECT r.participant_id, r.reaction, r.added_at, r.removed_at
        FROM messages m JOIN message_reactions r ON r.message_seq = m.seq
        WHERE m.id = ? AND m.conversation_id = ? ORDER BY r.added_at, r.rowid`,
    );
    const record = db.transaction((change: ReactionChange) => this.#record(change));
    this.record = (change) => record.immediate(change);
  }

  list(conversationId: string, messageId: string): MessageReaction[] {
    return this.#list.all(messageId, conversationId).map((row) => ({
      participantId: row.participant_id,
      reaction: row.reaction,
      addedAt: row.added_at,
      ...(row.removed_at === null ? {} : { removedAt: row.removed_at }),
    }));
  }

  #record(change: ReactionChange): boolean {
    const ref = [change.channelType, change.channelId, change.messageId] as const;
    const turn = this.#find.get(...ref) ?? this.#findPart.get(...ref);
    if (turn === undefined) return false;
    const who = [turn.seq, change.participantId, change.reaction] as const;
    const open = this.#open.get(...who);
    if (change.removed === true) {
      if (open !== undefined) this.#remove.run(change.at, open, change.at);
    } else if (open === undefined && this.#removedSince.get(...who, change.at) === undefined) {
      this.#add.run(turn.seq, turn.id, change.participantId, change.reaction, change.at);
    }
    return true;
  }
}

interface Row {
  participant_id: string;
  reaction: string;
  added_at: string;
  removed_at: string | null;
}
