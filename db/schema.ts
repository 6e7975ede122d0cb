import { sql } from 'drizzle-orm';
import {
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
  uniqueIndex,
} from 'drizzle-orm/sqlite-core';

/**
 * The SQL surface of colloquy. docs/sql.md documents every table and column; change both
 * together, then `npm run db:generate` to write the migration.
 */

/** One row per conversation (a DM, a channel, or a thread inside a channel). */
export const conversations = sqliteTable(
  'conversations',
  {
    id: text('id').primaryKey(),
    channelType: text('channel_type').notNull(),
    channelId: text('channel_id').notNull(),
    channelName: text('channel_name'),
    threadId: text('thread_id'),
    scope: text('scope', { enum: ['channel', 'dm', 'thread'] }).notNull(),
    createdAt: text('created_at').notNull(),
    lastMessageAt: text('last_message_at').notNull(),
    messageCount: integer('message_count').notNull().default(0),
    /** A name people gave it (`createConversation` / `updateConversation`). */
    title: text('title'),
    /** What the application keeps about it, as JSON. */
    metadata: text('metadata'),
    /**
     * A small integer naming the conversation inside this file, set by a trigger when the row
     * is inserted: the high 32 bits of its turns' `messages_fts` rowids.
     */
    number: integer('number'),
  },
  (t) => [
    // No index on last_message_at: every turn moves it, and the listing sorts a few thousand
    // rows at most; a turn's commit should not pay for two index entries moving each time.
    uniqueIndex('conversations_number_uq').on(t.number),
  ],
);

/** Everyone who ever wrote a turn: people, our agents, other bots, the system. */
export const participants = sqliteTable('participants', {
  id: text('id').primaryKey(),
  kind: text('kind', { enum: ['user', 'agent', 'system'] }).notNull(),
  displayName: text('display_name'),
  firstSeenAt: text('first_seen_at').notNull(),
  lastSeenAt: text('last_seen_at').notNull(),
});

/** One row per turn. `seq` is the monotonic insertion order. */
export const messages = sqliteTable(
  'messages',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull(),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    participantId: text('participant_id')
      .notNull()
      .references(() => participants.id),
    content: text('content').notNull(),
    timestamp: text('timestamp').notNull(),
    scope: text('scope', { enum: ['channel', 'dm', 'thread'] }).notNull(),
    channelType: text('channel_type').notNull(),
    channelId: text('channel_id').notNull(),
    threadId: text('thread_id'),
    platformMessageId: text('platform_message_id'),
    replyToMessageId: text('reply_to_message_id'),
    replyToParticipantId: text('reply_to_participant_id'),
    isSummary: integer('is_summary', { mode: 'boolean' }).notNull().default(false),
    summaryForAgentId: text('summary_for_agent_id'),
    editedAt: text('edited_at'),
    deletedAt: text('deleted_at'),
    /** The rest of `StoredMessage.metadata`, as JSON. */
    metadata: text('metadata').notNull().default('{}'),
    /** An agent reply's model response (or trace) id. */
    traceId: text('trace_id'),
    /** An agent reply's sources as a JSON array (one row each in the `message_sources` view). */
    sources: text('sources'),
    /** An agent reply's reasoning (the model's thinking), when it gave one. */
    reasoning: text('reasoning'),
    /** The delegation a turn belongs to: the task turn's id (see `delegate`). */
    delegationId: text('delegation_id'),
    /** The agent that delegated the task this turn belongs to. */
    delegatedBy: text('delegated_by'),
    /** On a task turn: the agent the task was handed to. */
    delegatedTo: text('delegated_to'),
    createdAt: text('created_at')
      .notNull()
      .default(sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`),
  },
  (t) => [
    uniqueIndex('messages_id_uq').on(t.id),
    uniqueIndex('messages_platform_uq')
      .on(t.channelType, t.channelId, t.platformMessageId)
      .where(sql`${t.platformMessageId} is not null`),
    index('messages_conversation_time_idx').on(t.conversationId, t.timestamp, t.seq),
    index('messages_conversation_participant_idx').on(
      t.conversationId,
      t.participantId,
      t.timestamp,
    ),
    /** Partial: most turns reply to no one and cost this index nothing. */
    index('messages_conversation_reply_to_idx')
      .on(t.conversationId, t.replyToParticipantId, t.timestamp)
      .where(sql`${t.replyToParticipantId} is not null`),
    index('messages_summary_idx')
      .on(t.conversationId, t.summaryForAgentId, t.seq)
      .where(sql`${t.isSummary} = 1`),
    /** The few turns of delegations: "everything one delegation did" is one range. */
    index('messages_delegation_idx')
      .on(t.delegationId, t.seq)
      .where(sql`${t.delegationId} is not null`),
    index('messages_trace_idx')
      .on(t.traceId)
      .where(sql`${t.traceId} is not null`),
    /** The few turns with sources: what the `message_sources` view reads. */
    index('messages_sources_idx')
      .on(t.seq)
      .where(sql`${t.sources} is not null`),
    /** Every turn of a DM concerns the agent: the addressed-only query reads them from here. */
    index('messages_dm_time_idx')
      .on(t.conversationId, t.timestamp, t.seq)
      .where(sql`${t.scope} = 'dm'`),
  ],
);

/** Who each turn mentions, one row per mention, so mentions need no JSON parsing. */
export const messageMentions = sqliteTable(
  'message_mentions',
  {
    messageSeq: integer('message_seq')
      .notNull()
      .references(() => messages.seq, { onDelete: 'cascade' }),
    conversationId: text('conversation_id').notNull(),
    participantId: text('participant_id').notNull(),
    /** The mentioning turn's timestamp, copied so "newest mentions of X" is one index range. */
    timestamp: text('timestamp').notNull().default(''),
  },
  (t) => [
    primaryKey({ columns: [t.messageSeq, t.participantId] }),
    index('message_mentions_time_idx').on(
      t.conversationId,
      t.participantId,
      t.timestamp,
      t.messageSeq,
    ),
    index('message_mentions_participant_idx').on(t.participantId),
  ],
);

/** Earlier texts of edited turns: each edit keeps the text it replaced. */
export const messageRevisions = sqliteTable(
  'message_revisions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    messageSeq: integer('message_seq')
      .notNull()
      .references(() => messages.seq, { onDelete: 'cascade' }),
    content: text('content').notNull(),
    /** When this text was the current one until (the edit's time). */
    replacedAt: text('replaced_at').notNull(),
  },
  (t) => [index('message_revisions_message_idx').on(t.messageSeq, t.id)],
);

export type ConversationRow = typeof conversations.$inferSelect;
export type ParticipantRow = typeof participants.$inferSelect;
export type MessageRow = typeof messages.$inferSelect;
export type MessageMentionRow = typeof messageMentions.$inferSelect;
export type MessageRevisionRow = typeof messageRevisions.$inferSelect;
