import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/**
 * The Postgres SQL surface of colloquy: the same tables, columns and views as the SQLite
 * schema (db/sqlite/schema.ts), with Postgres types (docs/postgres.md). Change both together, then
 * `npm run db:generate` writes the migrations of both.
 */

/** Timestamps are `timestamptz`; the store reads them back as ISO 8601 UTC strings. */
const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'string', precision: 3 });

/** A full-text document (`to_tsvector`). */
const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

/** A transaction id (`pg_current_xact_id()`), for a tail cursor that misses no late commit. */
const xid8 = customType<{ data: string }>({ dataType: () => 'xid8' });

/**
 * What search indexes: the content with ASCII punctuation as spaces, so words split where
 * SQLite's tokenizer splits them (Postgres's parser would keep `user@example.com`,
 * `example.com/path` or `3.14` whole, and `example` would not find them).
 */
const SEARCH_TEXT = `translate(content, '!"#$%&''()*+,-./:;<=>?@[\\]^_\`{|}~', '${' '.repeat(32)}')`;

/** One row per conversation (a DM, a channel, or a thread inside a channel). */
export const conversations = pgTable('conversations', {
  id: text('id').primaryKey(),
  channelType: text('channel_type').notNull(),
  channelId: text('channel_id').notNull(),
  channelName: text('channel_name'),
  threadId: text('thread_id'),
  scope: text('scope', { enum: ['channel', 'dm', 'thread'] }).notNull(),
  createdAt: at('created_at').notNull(),
  lastMessageAt: at('last_message_at').notNull(),
  messageCount: integer('message_count').notNull().default(0),
  title: text('title'),
  metadata: jsonb('metadata'),
});

/** Everyone who ever wrote a turn: people, our agents, other bots, the system. */
export const participants = pgTable('participants', {
  id: text('id').primaryKey(),
  kind: text('kind', { enum: ['user', 'agent', 'system'] }).notNull(),
  displayName: text('display_name'),
  firstSeenAt: at('first_seen_at').notNull(),
  lastSeenAt: at('last_seen_at').notNull(),
});

/** One row per turn. `seq` is the insertion order (an identity: gaps, never reuse). */
export const messages = pgTable(
  'messages',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    id: text('id').notNull(),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    participantId: text('participant_id')
      .notNull()
      .references(() => participants.id),
    content: text('content').notNull(),
    timestamp: at('timestamp').notNull(),
    scope: text('scope', { enum: ['channel', 'dm', 'thread'] }).notNull(),
    channelType: text('channel_type').notNull(),
    channelId: text('channel_id').notNull(),
    threadId: text('thread_id'),
    platformMessageId: text('platform_message_id'),
    replyToMessageId: text('reply_to_message_id'),
    replyToParticipantId: text('reply_to_participant_id'),
    isSummary: boolean('is_summary').notNull().default(false),
    summaryForAgentId: text('summary_for_agent_id'),
    editedAt: at('edited_at'),
    deletedAt: at('deleted_at'),
    /** `sending`, `sent`, `unconfirmed` or `failed` for replies the bot sent; NULL otherwise. */
    delivery: text('delivery', { enum: ['sending', 'sent', 'unconfirmed', 'failed'] }),
    metadata: jsonb('metadata').notNull().default({}),
    traceId: text('trace_id'),
    sources: jsonb('sources'),
    /** The files the turn carried, as references (one row each in `message_attachments`). */
    attachments: jsonb('attachments'),
    reasoning: text('reasoning'),
    delegationId: text('delegation_id'),
    delegatedBy: text('delegated_by'),
    delegatedTo: text('delegated_to'),
    createdAt: at('created_at').notNull().defaultNow(),
    /** The writing transaction: `colloquy tail` reads up to the oldest one still open. */
    txid: xid8('txid')
      .notNull()
      .default(sql`pg_current_xact_id()`),
    /** The words of `content`, accents folded (text search configuration `colloquy`). */
    search: tsvector('search')
      .notNull()
      .generatedAlwaysAs(sql.raw(`to_tsvector('colloquy'::regconfig, ${SEARCH_TEXT})`)),
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
    index('messages_conversation_reply_to_idx')
      .on(t.conversationId, t.replyToParticipantId, t.timestamp)
      .where(sql`${t.replyToParticipantId} is not null`),
    index('messages_summary_idx')
      .on(t.conversationId, t.summaryForAgentId, t.seq)
      .where(sql`${t.isSummary}`),
    index('messages_delegation_idx')
      .on(t.delegationId, t.seq)
      .where(sql`${t.delegationId} is not null`),
    index('messages_trace_idx')
      .on(t.traceId)
      .where(sql`${t.traceId} is not null`),
    index('messages_sources_idx')
      .on(t.seq)
      .where(sql`${t.sources} is not null`),
    index('messages_attachments_idx')
      .on(t.timestamp)
      .where(sql`${t.attachments} is not null`),
    /**
     * The few thread turns, by the turn they retell: forgetting finds a person's threads. The
     * migration adds statistics on the expression (`messages_thread_parent_stats`), which tell
     * the planner how few those turns are.
     */
    index('messages_thread_parent_idx')
      .on(sql`(${t.metadata}->'threadParent'->>'id')`)
      .where(sql`${t.metadata}->'threadParent'->>'id' is not null`),
    index('messages_dm_time_idx')
      .on(t.conversationId, t.timestamp, t.seq)
      .where(sql`${t.scope} = 'dm'`),
    /** Search within one conversation (btree_gin puts the conversation in the GIN index). */
    index('messages_search_idx').using('gin', t.conversationId, t.search),
    /** `colloquy tail`: turns committed after a cursor. */
    index('messages_txid_idx').on(t.txid, t.seq),
  ],
);

/** Reactions on turns, one row per reaction added; `removed_at` once taken back. */
export const messageReactions = pgTable(
  'message_reactions',
  {
    messageSeq: bigint('message_seq', { mode: 'number' })
      .notNull()
      .references(() => messages.seq, { onDelete: 'cascade' }),
    messageId: text('message_id').notNull(),
    participantId: text('participant_id').notNull(),
    reaction: text('reaction').notNull(),
    addedAt: at('added_at').notNull(),
    removedAt: at('removed_at'),
  },
  (t) => [
    index('message_reactions_message_idx').on(t.messageSeq, t.participantId, t.reaction),
    /** A person's reaction is open on a turn once, however many instances record it. */
    uniqueIndex('message_reactions_open_uq')
      .on(t.messageSeq, t.participantId, t.reaction)
      .where(sql`${t.removedAt} is null`),
    index('message_reactions_added_idx').on(t.addedAt),
  ],
);

/** Who each turn mentions, one row per mention, in the order the turn names them. */
export const messageMentions = pgTable(
  'message_mentions',
  {
    messageSeq: bigint('message_seq', { mode: 'number' })
      .notNull()
      .references(() => messages.seq, { onDelete: 'cascade' }),
    conversationId: text('conversation_id').notNull(),
    participantId: text('participant_id').notNull(),
    timestamp: at('timestamp').notNull(),
    /** The mention's place in the turn's `mentions` (SQLite keeps it as the rowid). */
    position: integer('position').notNull().default(0),
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
export const messageRevisions = pgTable(
  'message_revisions',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    messageSeq: bigint('message_seq', { mode: 'number' })
      .notNull()
      .references(() => messages.seq, { onDelete: 'cascade' }),
    content: text('content').notNull(),
    replacedAt: at('replaced_at').notNull(),
  },
  (t) => [index('message_revisions_message_idx').on(t.messageSeq, t.id)],
);

/** One row per message whose `once` buttons a press used (as the SQLite schema's). */
export const usedMessages = pgTable('used_messages', {
  messageSeq: bigint('message_seq', { mode: 'number' })
    .primaryKey()
    .references(() => messages.seq, { onDelete: 'cascade' }),
  pressId: text('press_id').notNull(),
});

/** One agent's work on one turn (`src/runs.ts`). */
export const agentRuns = pgTable(
  'agent_runs',
  {
    id: text('id').primaryKey(),
    messageId: text('message_id').notNull(),
    conversationId: text('conversation_id').notNull(),
    agentId: text('agent_id').notNull(),
    status: text('status', {
      enum: ['pending', 'running', 'answered', 'failed', 'expired', 'unconfirmed'],
    }).notNull(),
    createdAt: at('created_at').notNull(),
    startedAt: at('started_at'),
    finishedAt: at('finished_at'),
    model: text('model'),
    inputTokens: integer('input_tokens'),
    outputTokens: integer('output_tokens'),
    replyId: text('reply_id'),
    error: text('error'),
    attempts: integer('attempts').notNull().default(0),
    /** The assembled prompt as JSON text, only when the bot records prompts. */
    prompt: text('prompt'),
  },
  (t) => [
    index('agent_runs_message_idx').on(t.messageId),
    index('agent_runs_reply_idx')
      .on(t.replyId)
      .where(sql`${t.replyId} is not null`),
    index('agent_runs_unfinished_idx')
      .on(t.status, t.createdAt)
      .where(sql`${t.status} in ('pending', 'running')`),
    index('agent_runs_created_idx').on(t.createdAt),
    /** A conversation's runs: the drain reads its unfinished ones, forgetting and deleting all. */
    index('agent_runs_conversation_idx').on(t.conversationId, t.status),
  ],
);

/** A few values the runtime keeps between runs (the Discord gateway session), by key. */
export const colloquyState = pgTable('colloquy_state', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: at('updated_at').notNull(),
});

/**
 * The posts the bot starts (`bot.send`), one row each, the queue they are delivered from:
 * claimed by one instance (until `claimed_until`) with `FOR UPDATE SKIP LOCKED`. Once sent, its
 * turn (`messages.id` = `id`, `metadata->>'origin' = 'post'`) is the record.
 */
export const scheduledPosts = pgTable(
  'scheduled_posts',
  {
    id: text('id').primaryKey(),
    conversationId: text('conversation_id').notNull(),
    channelType: text('channel_type').notNull(),
    message: jsonb('message').notNull(),
    participant: jsonb('participant').notNull(),
    dueAt: at('due_at').notNull(),
    status: text('status').notNull(),
    createdAt: at('created_at').notNull(),
    claimedBy: text('claimed_by'),
    claimedUntil: at('claimed_until'),
    error: text('error'),
  },
  (t) => [
    index('scheduled_posts_due_idx')
      .on(t.dueAt)
      .where(sql`${t.status} = 'pending'`),
  ],
);

/** Named, expiring holds shared by every instance (`src/leases.ts`). */
export const leases = pgTable('leases', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  token: text('token').notNull(),
  expiresAt: at('expires_at').notNull(),
});
