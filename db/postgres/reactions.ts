import type pg from 'pg';
import type { MessageReaction, ReactionChange } from '../../src/reactions.js';
import { PART_IN_CHANNEL } from './statements.js';
import type { Queryable } from './runs.js';

/**
 * A reaction added or removed, in one statement, on the turn the platform message is or the
 * split reply it is a later part of; answers whether the turn is known. An addition is a row,
 * unless the same person's same reaction is open on the turn (the unique key on open
 * reactions holds that when two instances record it at once) or was removed after the
 * addition's time (a redelivered addition; at equal times the order of arrival decides). A
 * removal closes the open row, unless it was added after the removal's time.
 */
const RECORD = `WITH m AS (
    (SELECT seq, id FROM messages
      WHERE channel_type = $1 AND channel_id = $2 AND platform_message_id = $3)
    UNION ALL (SELECT m.seq, m.id FROM messages m WHERE ${PART_IN_CHANNEL})
    LIMIT 1),
  added AS (
    INSERT INTO message_reactions (message_seq, message_id, participant_id, reaction, added_at)
    SELECT m.seq, m.id, $4, $5, $6 FROM m
    WHERE NOT $7 AND NOT EXISTS (SELECT FROM message_reactions r WHERE r.message_seq = m.seq
      AND r.participant_id = $4 AND r.reaction = $5 AND (r.removed_at IS NULL OR r.removed_at > $6))
    ON CONFLICT (message_seq, participant_id, reaction) WHERE removed_at IS NULL DO NOTHING),
  removed AS (
    UPDATE message_reactions r SET removed_at = $6 FROM m
    WHERE $7 AND r.message_seq = m.seq AND r.participant_id = $4 AND r.reaction = $5
      AND r.removed_at IS NULL AND r.added_at <= $6)
  SELECT count(*)::int AS found FROM m`;

const LIST = `SELECT r.participant_id, r.reaction, r.added_at, r.removed_at
  FROM messages m JOIN message_reactions r ON r.message_seq = m.seq
  WHERE m.id = $1 AND m.conversation_id = $2 ORDER BY r.added_at, r.ctid`;

/**
 * Records a reaction change in `message_reactions`; false when the turn is unknown.
 *
 * @example
 * ```ts
 * await recordReaction(pool, { ...ref, participantId: 'slack:U1', reaction: 'thumbsup', at });
 * ```
 */
export async function recordReaction(db: Queryable, change: ReactionChange): Promise<boolean> {
  const { rows } = await db.query<{ found: number }>(RECORD, [
    change.channelType,
    change.channelId,
    change.messageId,
    change.participantId,
    change.reaction,
    change.at,
    change.removed === true,
  ]);
  return (rows[0]?.found ?? 0) > 0;
}

/**
 * The reactions on a turn, oldest first, removed ones included.
 *
 * @example
 * ```ts
 * const reactions = await listReactions(pool, 'slack:T1:C1', 'slack:T1:C1:1700000000.000200');
 * ```
 */
export async function listReactions(
  db: pg.Pool,
  conversationId: string,
  messageId: string,
): Promise<MessageReaction[]> {
  const { rows } = await db.query<{
    participant_id: string;
    reaction: string;
    added_at: string;
    removed_at: string | null;
  }>(LIST, [messageId, conversationId]);
  return rows.map((row) => ({
    participantId: row.participant_id,
    reaction: row.reaction,
    addedAt: row.added_at,
    ...(row.removed_at === null ? {} : { removedAt: row.removed_at }),
  }));
}
