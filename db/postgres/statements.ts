import { PARTS_WITHIN } from '../../src/store.js';
import type { GetDialect } from '../queries.js';

/**
 * The columns every read selects, in `MESSAGE_COLUMN_NAMES` order (db/rows.ts), so the row
 * mapping is the SQLite store's: `m` = messages, `p` = participants.
 */
export const PG_MESSAGE_COLUMNS = `m.seq, m.id, m.conversation_id, m.participant_id, p.kind,
  p.display_name, m.content, m.timestamp, m.scope, m.channel_type, m.channel_id, m.thread_id,
  m.platform_message_id, m.reply_to_message_id, m.reply_to_participant_id,
  m.is_summary::int AS is_summary, m.summary_for_agent_id, m.edited_at, m.deleted_at,
  m.metadata, coalesce((SELECT json_agg(mm.participant_id ORDER BY mm.position)
    FROM message_mentions mm WHERE mm.message_seq = m.seq), '[]') AS mentions,
  m.trace_id, m.sources, m.reasoning, m.delegation_id, m.delegated_by, m.delegated_to,
  m.delivery, m.attachments`;

/** How `buildGetQuery` speaks Postgres. */
export const POSTGRES_DIALECT: GetDialect = {
  columns: PG_MESSAGE_COLUMNS,
  notSummary: 'NOT m.is_summary',
  dmIndex: true,
  wrote: (alias, where) => [
    `SELECT m.seq, m.timestamp FROM messages m
      WHERE m.conversation_id = @conversation AND m.participant_id = @${alias}${where}`,
  ],
};

const FROM_MESSAGES = `FROM messages m JOIN participants p ON p.id = m.participant_id`;

/**
 * A new turn in one statement: the message insert is the claim (`ON CONFLICT DO NOTHING`
 * on either unique key), and the mentions are written only when it inserted; the conversation
 * and the participant are created when missing, counted and tallied as the transaction commits
 * (`commitTransaction`). Foreign keys are checked at the end of the statement, after the
 * conversation and participant rows exist.
 */
const APPEND = `WITH m AS (
    INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, scope,
      channel_type, channel_id, thread_id, platform_message_id, reply_to_message_id,
      reply_to_participant_id, is_summary, summary_for_agent_id, metadata, trace_id, sources,
      reasoning, delegation_id, delegated_by, delegated_to, delivery, attachments)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
      $19, $20, $21, $22, $27)
    ON CONFLICT DO NOTHING
    RETURNING seq),
  p AS (
    INSERT INTO participants (id, kind, display_name, first_seen_at, last_seen_at)
    SELECT $3, $23, $24, $5, $5 WHERE EXISTS (SELECT FROM m)
    ON CONFLICT (id) DO NOTHING),
  c AS (
    INSERT INTO conversations (id, channel_type, channel_id, channel_name, thread_id, scope,
      created_at, last_message_at, message_count)
    SELECT $2, $7, $8, $25, $9, $6, $5, $5, 0 WHERE EXISTS (SELECT FROM m)
    ON CONFLICT (id) DO NOTHING),
  mentions AS (
    INSERT INTO message_mentions (message_seq, conversation_id, participant_id, timestamp,
      position)
    SELECT m.seq, $2, w.id, $5, min(w.position)
    FROM m, unnest($26::text[]) WITH ORDINALITY AS w(id, position)
    GROUP BY m.seq, w.id)
  SELECT seq FROM m`;

/**
 * The reply of a channel one of whose later parts (`metadata.partMessageIds`) is the platform
 * message ($1 channel type, $2 channel id, $3 message id), among the store's newest
 * `PARTS_WITHIN` turns, newest first (as in the SQLite store): a message the store does not
 * have costs a bounded read, however long the channel.
 */
export const PART_IN_CHANNEL = `m.seq = (SELECT r.seq FROM messages r
  WHERE r.seq > (SELECT max(seq) FROM messages) - ${PARTS_WITHIN}
    AND r.channel_type = $1 AND r.channel_id = $2 AND r.platform_message_id IS NOT NULL
    AND r.metadata->'partMessageIds' ? $3
  ORDER BY r.seq DESC LIMIT 1)`;

/** Every fixed statement of the Postgres store, by name. */
export const PG = {
  append: APPEND,
  getById: `SELECT ${PG_MESSAGE_COLUMNS} ${FROM_MESSAGES} WHERE m.id = $1`,
  findDuplicate: `SELECT ${PG_MESSAGE_COLUMNS} ${FROM_MESSAGES}
    WHERE m.id = $1 OR (m.channel_type = $2 AND m.channel_id = $3 AND m.platform_message_id = $4)
    ORDER BY m.id = $1 DESC LIMIT 1`,
  getBySeqs: `SELECT ${PG_MESSAGE_COLUMNS} ${FROM_MESSAGES} WHERE m.seq = ANY($1::bigint[])`,
  /** The turn a platform message is (the unique platform index). */
  getByPlatform: `SELECT ${PG_MESSAGE_COLUMNS} ${FROM_MESSAGES}
    WHERE m.channel_type = $1 AND m.channel_id = $2 AND m.platform_message_id = $3`,
  getByChannelPart: `SELECT ${PG_MESSAGE_COLUMNS} ${FROM_MESSAGES} WHERE ${PART_IN_CHANNEL}`,
  /** The reply of a conversation one of whose later parts is the platform message. */
  getByPart: `SELECT ${PG_MESSAGE_COLUMNS} ${FROM_MESSAGES}
    WHERE m.conversation_id = $1 AND m.platform_message_id IS NOT NULL
      AND m.metadata->'partMessageIds' ? $2
    LIMIT 1`,
  getSummary: `SELECT ${PG_MESSAGE_COLUMNS} ${FROM_MESSAGES}
    WHERE m.conversation_id = $1 AND m.is_summary AND m.summary_for_agent_id = $2
    ORDER BY m.seq DESC LIMIT 1`,

  findByPlatform: `SELECT seq, content, edited_at FROM messages
    WHERE channel_type = $1 AND channel_id = $2 AND platform_message_id = $3 FOR UPDATE`,
  insertRevision: `INSERT INTO message_revisions (message_seq, content, replaced_at)
    VALUES ($1, $2, $3)`,
  applyEdit: `UPDATE messages SET content = $1, edited_at = $2 WHERE seq = $3`,
  /** Marks deleted the turn a platform message is, or the reply it is a later part of. */
  markDeleted: `UPDATE messages SET deleted_at = coalesce(deleted_at, $4)
    WHERE seq = (
      (SELECT seq FROM messages
        WHERE channel_type = $1 AND channel_id = $2 AND platform_message_id = $3)
      UNION ALL (SELECT m.seq FROM messages m WHERE ${PART_IN_CHANNEL})
      LIMIT 1)`,

  searchCandidates: `SELECT seq, left(content, 20000) AS content FROM messages
    WHERE seq = ANY($1::bigint[]) AND conversation_id = $2 AND deleted_at IS NULL
      AND NOT is_summary`,

  lockConversation: `SELECT FROM conversations WHERE id = $1 FOR NO KEY UPDATE`,
  deleteMessages: `DELETE FROM messages WHERE conversation_id = $1 AND id = ANY($2::text[])`,
  // The turns this transaction inserted are left out of the count: the statement that commits
  // it adds them (TALLY_CONVERSATIONS in locks.ts).
  refreshConversation: `UPDATE conversations SET
      message_count = (SELECT count(*) FROM messages WHERE conversation_id = $1
        AND txid IS DISTINCT FROM pg_current_xact_id_if_assigned()),
      created_at = coalesce((SELECT min(timestamp) FROM messages WHERE conversation_id = $1),
        created_at),
      last_message_at = coalesce(
        (SELECT max(timestamp) FROM messages WHERE conversation_id = $1), last_message_at)
    WHERE id = $1`,
  getConversation: `SELECT * FROM conversations WHERE id = $1`,
  createConversation: `INSERT INTO conversations (id, channel_type, channel_id, channel_name,
      thread_id, scope, created_at, last_message_at, message_count, title, metadata)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $7, 0, $8, $9)
    ON CONFLICT DO NOTHING`,
  updateConversation: `UPDATE conversations SET
      title = CASE $2::text WHEN 'set' THEN $3 WHEN 'clear' THEN NULL ELSE title END,
      metadata = CASE $4::text WHEN 'set' THEN $5::jsonb WHEN 'clear' THEN NULL
        ELSE metadata END
    WHERE id = $1`,
  deleteConversation: `DELETE FROM conversations WHERE id = $1`,
  authorsIn: `SELECT DISTINCT participant_id FROM messages WHERE conversation_id = $1`,
  deleteSilentParticipants: `DELETE FROM participants
    WHERE id = ANY($1::text[])
      AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.participant_id = participants.id)`,
  deleteEmptyConversation: `DELETE FROM conversations WHERE id = $1 AND message_count = 0`,

  deleteMessagesOf: `DELETE FROM messages WHERE participant_id = $1`,
  deleteSummaries: `DELETE FROM messages WHERE conversation_id = $1 AND is_summary`,
  deleteMentionsOf: `DELETE FROM message_mentions WHERE participant_id = $1`,
  clearRepliesTo: `UPDATE messages SET reply_to_participant_id = NULL
    WHERE reply_to_participant_id = $1`,
  deleteParticipant: `DELETE FROM participants WHERE id = $1`,
  deleteReactionsOf: `DELETE FROM message_reactions WHERE participant_id = $1`,
  redactRevisions: `DELETE FROM message_revisions
    WHERE message_seq IN (SELECT seq FROM messages WHERE participant_id = $1)`,
  // The words a kept turn carries beside its text: its files, Slack's raw text, a command's
  // arguments (docs/sql.md, "Edits, deletes and forgetting").
  redactMessages: `UPDATE messages SET content = '[redacted]', attachments = NULL,
      metadata = jsonb_set(metadata - 'slackText', '{interaction,args}', '"[redacted]"', false)
    WHERE participant_id = $1`,
  // A recorded prompt holds the turns of its conversation.
  forgetPrompts: `UPDATE agent_runs SET prompt = NULL
    WHERE prompt IS NOT NULL AND conversation_id = ANY($1::text[])`,
  deleteRuns: `DELETE FROM agent_runs WHERE conversation_id = $1`,
  redactParticipant: `UPDATE participants SET display_name = NULL WHERE id = $1`,
} as const;

/**
 * One search word's newest matches in a conversation (the GIN index on conversation_id,
 * search): each spelling (composed, decomposed) as a phrase of the words the configuration
 * makes of it, so the word is text, never query syntax. `$1` the conversation, `$2` the limit.
 *
 * @example
 * ```ts
 * searchWordSql(2); // … phraseto_tsquery('colloquy', $3) || phraseto_tsquery('colloquy', $4) …
 * ```
 */
export function searchWordSql(spellings: number): string {
  const parts = Array.from(
    { length: spellings },
    (_, i) => `phraseto_tsquery('colloquy'::regconfig, $${i + 3})`,
  );
  return `SELECT seq FROM messages WHERE conversation_id = $1 AND search @@ (${parts.join(' || ')})
    ORDER BY seq DESC LIMIT $2`;
}

/**
 * A statement written with `@name` parameters (as the SQLite statements are) in Postgres's
 * `$n` form, with the values in order.
 *
 * @example
 * ```ts
 * positional('SELECT @a, @b, @a', { a: 1, b: 2 }); // { text: 'SELECT $1, $2, $1', values: [1, 2] }
 * ```
 */
export function positional(
  sql: string,
  params: Record<string, unknown>,
): { text: string; values: unknown[] } {
  const order: string[] = [];
  const text = sql.replace(/@(\w+)/g, (_, name: string) => {
    if (!(name in params)) throw new Error(`no value for @${name}`);
    let index = order.indexOf(name);
    if (index < 0) index = order.push(name) - 1;
    return `$${index + 1}`;
  });
  return { text, values: order.map((name) => params[name]) };
}
