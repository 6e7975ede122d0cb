import type Database from 'better-sqlite3';
import { PARTS_WITHIN } from '../../src/store.js';
import { LIMIT, type GetDialect } from '../queries.js';

/**
 * The columns every SQLite read selects (`MESSAGE_COLUMN_NAMES` order), `m` = messages,
 * `p` = participants; the mentions come back as a JSON array in insertion order (collected
 * only for turns that have any: the ordered subquery costs more than the lookup that skips
 * it).
 *
 * @example
 * ```ts
 * db.prepare(`SELECT ${MESSAGE_COLUMNS} FROM messages m JOIN participants p ON p.id = m.participant_id`);
 * ```
 */
export const MESSAGE_COLUMNS = `m.seq, m.id, m.conversation_id, m.participant_id, p.kind, p.display_name,
  m.content, m.timestamp, m.scope, m.channel_type, m.channel_id, m.thread_id,
  m.platform_message_id, m.reply_to_message_id, m.reply_to_participant_id, m.is_summary,
  m.summary_for_agent_id, m.edited_at, m.deleted_at, m.metadata,
  CASE WHEN EXISTS (SELECT 1 FROM message_mentions WHERE message_seq = m.seq)
    THEN (SELECT json_group_array(participant_id) FROM
      (SELECT participant_id FROM message_mentions WHERE message_seq = m.seq ORDER BY rowid))
    ELSE '[]' END AS mentions, m.trace_id, m.sources, m.reasoning, m.delegation_id,
  m.delegated_by, m.delegated_to, m.delivery, m.attachments`;

/** How `buildGetQuery` speaks SQLite. */
export const SQLITE_DIALECT: GetDialect = {
  columns: MESSAGE_COLUMNS,
  notSummary: 'm.is_summary = 0',
  // A DM's addressed-only query is its whole history: the store asks for it so (`get`), and a
  // turn's commit writes no DM index (migration 0014).
  dmIndex: false,
  // `messages_conversation_author_idx` holds only the turns not written as a person, so turns
  // the alias wrote as a person (rare for an agent's alias) are read from the conversation's
  // time index; `conversation_authors` says whether there are any, checked once per read.
  wrote: (alias, where) => [
    `SELECT m.seq, m.timestamp FROM messages m
      WHERE m.conversation_id = @conversation AND m.participant_id = @${alias}
        AND m.author_kind <> 'user'${where}`,
    `SELECT m.seq, m.timestamp FROM messages m
      WHERE m.conversation_id = @conversation AND m.participant_id = @${alias}
        AND m.author_kind = 'user' AND ${wroteAsPerson(alias, '@conversation')}${where}`,
  ],
};

/** `conversation_authors` says `@<who>` wrote in conversation `place` as a person. */
function wroteAsPerson(who: string, place: string): string {
  return `EXISTS (SELECT 1 FROM conversation_authors a WHERE a.conversation_id = ${place}
    AND a.participant_id = @${who} AND a.author_kind = 'user')`;
}

/**
 * "@<who> wrote a turn in conversation c": as an agent, from the agents' index; as a person,
 * only where `conversation_authors` says so, from the turns (the row outlives turns deleted
 * one by one, so the turns are checked).
 */
function wroteIn(who: string): string {
  const turn = `SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.participant_id = @${who}`;
  return `(EXISTS (${turn} AND m.author_kind <> 'user')
    OR ${wroteAsPerson(who, 'c.id')} AND EXISTS (${turn} AND m.author_kind = 'user'))`;
}

const FROM_MESSAGES = `FROM messages m JOIN participants p ON p.id = m.participant_id`;

/**
 * The reply of a channel one of whose later parts (`metadata.partMessageIds`) is the platform
 * message (channel type, channel id, message id), among the store's newest `PARTS_WITHIN`
 * turns, newest first (a range of the primary key; `+` keeps the channel's index out): a
 * message the store does not have costs a bounded read, however long the channel.
 */
export const PART_IN_CHANNEL = `m.seq = (SELECT r.seq FROM messages r
  WHERE r.seq > (SELECT max(seq) FROM messages) - ${PARTS_WITHIN}
    AND +r.channel_type = ? AND +r.channel_id = ? AND r.platform_message_id IS NOT NULL
    AND EXISTS (SELECT 1 FROM json_each(r.metadata, '$.partMessageIds') WHERE value = ?)
  ORDER BY r.seq DESC LIMIT 1)`;

/** "@participant wrote a turn in conversation c" (the listing, the web page, forgetting). */
export const WROTE_IN = wroteIn('participant');

/** `listingQuery`'s authored filters: an agent is one whose latest kind is `agent`. */
export const AUTHORED = {
  wroteIn: WROTE_IN,
  agentWroteIn: `EXISTS (SELECT 1 FROM participants p WHERE p.id = @agent AND p.kind = 'agent')
    AND ${wroteIn('agent')}`,
};

/** Every fixed statement of the store, prepared once when it opens. */
export const SQL = {
  getById: `SELECT ${MESSAGE_COLUMNS} ${FROM_MESSAGES} WHERE m.id = ?`,
  /** The seq of a stored turn with this id or this platform message (both unique indexes). */
  findDuplicateSeq: `SELECT seq FROM messages WHERE id = ?
    UNION ALL SELECT seq FROM messages
      WHERE channel_type = ? AND channel_id = ? AND platform_message_id = ?
    LIMIT 1`,
  getBySeq: `SELECT ${MESSAGE_COLUMNS} ${FROM_MESSAGES} WHERE m.seq = ?`,
  /** The turn a platform message is (the unique platform index). */
  getByPlatform: `SELECT ${MESSAGE_COLUMNS} ${FROM_MESSAGES}
    WHERE m.channel_type = ? AND m.channel_id = ? AND m.platform_message_id = ?`,
  /** The reply of a conversation one of whose later parts is the platform message. */
  getByPart: `SELECT ${MESSAGE_COLUMNS} ${FROM_MESSAGES}
    WHERE m.conversation_id = ? AND m.platform_message_id IS NOT NULL
      AND EXISTS (SELECT 1 FROM json_each(m.metadata, '$.partMessageIds') WHERE value = ?)
    LIMIT 1`,
  getByChannelPart: `SELECT ${MESSAGE_COLUMNS} ${FROM_MESSAGES} WHERE ${PART_IN_CHANNEL}`,
  findByPlatform: `SELECT seq, content, edited_at FROM messages
    WHERE channel_type = ? AND channel_id = ? AND platform_message_id = ?`,

  // Written when the author is new or their kind or name changes (a trigger on `messages`
  // keeps their times). A turn older than their newest one does not rename them.
  upsertParticipant: `INSERT INTO participants
      (id, kind, display_name, first_seen_at, last_seen_at)
    VALUES (@id, @kind, @name, @ts, @ts)
    ON CONFLICT (id) DO UPDATE SET
      kind = CASE WHEN excluded.last_seen_at >= last_seen_at THEN excluded.kind ELSE kind END,
      display_name = CASE
        WHEN excluded.display_name IS NOT NULL
          AND (display_name IS NULL OR excluded.last_seen_at >= last_seen_at)
        THEN excluded.display_name ELSE display_name END
    WHERE excluded.kind IS NOT kind
      OR (excluded.display_name IS NOT NULL AND excluded.display_name IS NOT display_name)`,
  // Written when the conversation is new or its name or thread becomes known (a trigger on
  // `messages` keeps its count and times).
  upsertConversation: `INSERT INTO conversations (id, channel_type, channel_id,
      channel_name, thread_id, scope, created_at, last_message_at, message_count)
    VALUES (@conversationId, @channelType, @channelId, @channelName, @threadId, @scope,
      @timestamp, @timestamp, 0)
    ON CONFLICT (id) DO UPDATE SET
      channel_name = coalesce(excluded.channel_name, channel_name),
      thread_id = coalesce(thread_id, excluded.thread_id)
    WHERE (excluded.channel_name IS NOT NULL AND excluded.channel_name IS NOT channel_name)
      OR (thread_id IS NULL AND excluded.thread_id IS NOT NULL)`,
  /**
   * Records that a press (`?` 1) used the buttons of the message with colloquy id `?` 2, unless
   * a press did already: answers the id of the press that used it (none: no such message).
   */
  takeUse: `INSERT INTO used_messages (message_seq, press_id)
    SELECT seq, ? FROM messages WHERE id = ?
    ON CONFLICT (message_seq) DO UPDATE SET press_id = press_id
    RETURNING press_id`,
  insertMessage: `INSERT INTO messages (id, conversation_id, participant_id, content,
      timestamp, scope, channel_type, channel_id, thread_id, platform_message_id,
      reply_to_message_id, reply_to_participant_id, is_summary, summary_for_agent_id, metadata,
      trace_id, sources, reasoning, delegation_id, delegated_by, delegated_to, delivery,
      author_kind, attachments)
    VALUES (@id, @conversationId, @participantId, @content, @timestamp, @scope, @channelType,
      @channelId, @threadId, @platformMessageId, @replyToMessageId, @replyToParticipantId,
      @isSummary, @summaryForAgentId, @metadata, @traceId, @sources, @reasoning, @delegationId,
      @delegatedBy, @delegatedTo, @delivery,
      @authorKind, @attachments)
    ON CONFLICT DO NOTHING`,
  insertMention: `INSERT OR IGNORE INTO message_mentions
    (message_seq, conversation_id, participant_id, timestamp) VALUES (?, ?, ?, ?)`,

  // A conversation's turns are the rowids (number << 32) | (4294967295 - seq): one range of
  // each word's list, newest first in ascending rowid order (which FTS5 seeks fast).
  searchWord: `SELECT 4294967295 - (rowid & 4294967295) FROM messages_fts
    WHERE messages_fts MATCH @match
      AND rowid BETWEEN @number << 32 AND (@number << 32) | 4294967295
    ORDER BY rowid ${LIMIT}`,
  searchCandidates: `SELECT m.seq, substr(m.content, 1, 20000) AS content
    FROM json_each(@seqs) j CROSS JOIN messages m ON m.seq = j.value
    WHERE m.conversation_id = @conversation AND m.deleted_at IS NULL AND m.is_summary = 0`,
  getBySeqs: `SELECT ${MESSAGE_COLUMNS} ${FROM_MESSAGES}
    WHERE m.seq IN (SELECT value FROM json_each(?))`,

  deleteMessages: `DELETE FROM messages
    WHERE +conversation_id = ? AND id IN (SELECT value FROM json_each(?))`,
  conversationScope: `SELECT scope FROM conversations WHERE id = ?`,
  getConversation: `SELECT id, channel_type, channel_id, channel_name, thread_id, scope,
      created_at, last_message_at, message_count, number, title, metadata
    FROM conversations WHERE id = @id`,
  createConversation: `INSERT INTO conversations (id, channel_type, channel_id, channel_name,
      thread_id, scope, created_at, last_message_at, message_count, title, metadata)
    VALUES (@id, @channelType, @channelId, @channelName, @threadId, @scope, @now, @now, 0,
      @title, @metadata)
    ON CONFLICT DO NOTHING`,
  updateConversation: `UPDATE conversations SET
      title = CASE @titleHow WHEN 'set' THEN @title WHEN 'clear' THEN NULL ELSE title END,
      metadata = CASE @metadataHow WHEN 'set' THEN @metadata WHEN 'clear' THEN NULL
        ELSE metadata END
    WHERE id = @id`,
  deleteConversation: `DELETE FROM conversations WHERE id = ?`,
  authorsIn: `SELECT DISTINCT participant_id FROM conversation_authors WHERE conversation_id = ?`,
  deleteSilentParticipants: `DELETE FROM participants
    WHERE id IN (SELECT value FROM json_each(?))
      AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.participant_id = participants.id)`,
  // A contentless index only marks deleted turns; their words stay in its segments until
  // they are merged. 'optimize' merges them all, dropping those words now.
  optimizeSearch: `INSERT INTO messages_fts (messages_fts) VALUES ('optimize')`,
  deleteEmptyConversation: `DELETE FROM conversations
    WHERE id = @id AND NOT EXISTS (SELECT 1 FROM messages WHERE conversation_id = @id)`,

  conversationsOf: `SELECT c.id FROM conversations c
    WHERE ${WROTE_IN}`,
  // The conversations of threads under a turn of theirs (`metadata.threadParent`): each is a
  // conversation of its own whose prompts and summaries retell that turn. It reads the thread
  // turns alone, by `messages_thread_parent_idx` (whose expression and WHERE it spells), then
  // each one's parent by id; a thread comes once per turn in it (forgetting dedupes them).
  threadsUnder: `SELECT t.conversation_id FROM messages t JOIN messages h
      ON h.id = json_extract(t.metadata, '$.threadParent.id')
      AND h.channel_type = t.channel_type AND h.channel_id = t.channel_id
    WHERE json_extract(t.metadata, '$.threadParent.id') IS NOT NULL
      AND h.participant_id = ? AND t.conversation_id <> h.conversation_id`,
  deleteMessagesOf: `DELETE FROM messages WHERE participant_id = ?`,
  deleteSummaries: `DELETE FROM messages WHERE conversation_id = ? AND is_summary = 1`,
  deleteMentionsOf: `DELETE FROM message_mentions WHERE participant_id = ?`,
  clearRepliesTo: `UPDATE messages SET reply_to_participant_id = NULL
    WHERE reply_to_participant_id = ?`,
  deleteParticipant: `DELETE FROM participants WHERE id = ?`,
  deleteReactionsOf: `DELETE FROM message_reactions WHERE participant_id = ?`,
  redactRevisions: `DELETE FROM message_revisions
    WHERE message_seq IN (SELECT seq FROM messages WHERE participant_id = ?)`,
  // The words a kept turn carries beside its text: its files, Slack's raw text, a command's
  // arguments (docs/sql.md, "Edits, deletes and forgetting").
  redactMessages: `UPDATE messages SET content = '[redacted]', attachments = NULL,
      metadata = json_replace(json_remove(metadata, '$.slackText'),
        '$.interaction.args', '[redacted]')
    WHERE participant_id = ?`,
  // A recorded prompt holds the turns of its conversation.
  forgetPrompts: `UPDATE agent_runs SET prompt = NULL
    WHERE prompt IS NOT NULL AND conversation_id IN (SELECT value FROM json_each(?))`,
  deleteRuns: `DELETE FROM agent_runs WHERE conversation_id = ?`,
  redactParticipant: `UPDATE participants SET display_name = NULL WHERE id = ?`,

  insertRevision: `INSERT INTO message_revisions (message_seq, content, replaced_at)
    VALUES (?, ?, ?)`,
  applyEdit: `UPDATE messages SET content = ?, edited_at = ? WHERE seq = ?`,
  markDeleted: `UPDATE messages SET deleted_at = coalesce(deleted_at, @deletedAt)
    WHERE channel_type = @channelType AND channel_id = @channelId
      AND platform_message_id = @messageId`,
  /** Marks deleted the reply a later part of which is deleted (deleted at, then the part). */
  markPartDeleted: `UPDATE messages SET deleted_at = coalesce(deleted_at, ?)
    WHERE seq = (SELECT m.seq FROM messages m WHERE ${PART_IN_CHANNEL})`,
  getSummary: `SELECT ${MESSAGE_COLUMNS} ${FROM_MESSAGES}
    WHERE m.conversation_id = ? AND m.is_summary = 1 AND m.summary_for_agent_id = ?
    ORDER BY m.seq DESC LIMIT 1`,
} as const;

/**
 * The store's prepared statements, by name.
 *
 * @example
 * ```ts
 * const statements: Statements = prepareStatements(db);
 * ```
 */
export type Statements = { [K in keyof typeof SQL]: Database.Statement };

/**
 * Prepares every fixed statement against an open, migrated database.
 *
 * @example
 * ```ts
 * const sql = prepareStatements(db);
 * sql.getConversation.get('telegram:42');
 * ```
 */
export function prepareStatements(db: Database.Database): Statements {
  const entries = Object.entries(SQL).map(([name, text]) => [name, db.prepare(text)]);
  const statements = Object.fromEntries(entries) as Statements;
  statements.searchWord.pluck();
  statements.findDuplicateSeq.pluck();
  statements.takeUse.pluck();
  statements.conversationScope.pluck();
  const reads = [
    'getById',
    'getBySeq',
    'getBySeqs',
    'getByPlatform',
    'getByPart',
    'getByChannelPart',
  ] as const;
  for (const read of reads.map((name) => statements[name])) {
    read.raw();
  }
  statements.getSummary.raw();
  statements.conversationsOf.pluck();
  statements.threadsUnder.pluck();
  statements.authorsIn.pluck();
  return statements;
}
