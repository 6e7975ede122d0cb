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

/**
 * One row per conversation (a DM, a channel, or a thread inside a channel), with its turns
 * counted: `message_count`, `created_at` and `last_message_at` follow every turn inserted,
 * deleted or given another time (triggers on `messages`, whoever writes).
 */
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
    /**
     * A small integer naming the conversation inside this file, set by a trigger when the row
     * is inserted: the high 32 bits of its turns' `messages_fts` rowids.
     */
    number: integer('number'),
    /** A name people gave it (`createConversation` / `updateConversation`). */
    title: text('title'),
    /** What the application keeps about it, as JSON. */
    metadata: text('metadata'),
  },
  (t) => [
    // No index on last_message_at: the listing sorts a few thousand rows at most.
    uniqueIndex('conversations_number_uq').on(t.number),
  ],
);

/**
 * Everyone who ever wrote a turn (people, our agents, other bots, the system): their latest
 * kind and name, and the times of their first and latest turns (kept by triggers on
 * `messages`).
 */
export const participants = sqliteTable('participants', {
  id: text('id').primaryKey(),
  kind: text('kind', { enum: ['user', 'agent', 'system'] }).notNull(),
  displayName: text('display_name'),
  firstSeenAt: text('first_seen_at').notNull(),
  lastSeenAt: text('last_seen_at').notNull(),
});

/**
 * One row per turn. `seq` is the monotonic insertion order, never reused (AUTOINCREMENT: not
 * even after the newest turn is deleted).
 */
export const messages = sqliteTable(
  'messages',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull(),
    // No foreign keys: the store writes the conversation and the author before the turn and a
    // trigger deletes a conversation's turns with it, so an append need not look them up.
    conversationId: text('conversation_id').notNull(),
    participantId: text('participant_id').notNull(),
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
    /**
     * For replies the bot sent: `sending` (recorded before the platform call), `sent`
     * (confirmed with the platform's ids), `unconfirmed` (never confirmed: not sent again),
     * `failed` (refused). NULL for every other turn.
     */
    delivery: text('delivery', { enum: ['sending', 'sent', 'unconfirmed', 'failed'] }),
    /** The rest of `StoredMessage.metadata`, as JSON. */
    metadata: text('metadata').notNull().default('{}'),
    /** An agent reply's model response (or trace) id. */
    traceId: text('trace_id'),
    /** An agent reply's sources as a JSON array (one row each in the `message_sources` view). */
    sources: text('sources'),
    /**
     * The files, images, voice notes and stickers the turn carried, as a JSON array of
     * references (one row each in the `message_attachments` view).
     */
    attachments: text('attachments'),
    /** An agent reply's reasoning (the model's thinking), when it gave one. */
    reasoning: text('reasoning'),
    /** The delegation a turn belongs to: the task turn's id (see `delegate`). */
    delegationId: text('delegation_id'),
    /** The agent that delegated the task this turn belongs to. */
    delegatedBy: text('delegated_by'),
    /** On a task turn: the agent the task was handed to. */
    delegatedTo: text('delegated_to'),
    /**
     * The kind the author wrote this turn as (`participants.kind` is their latest): the turns
     * of agents and the system are the only ones `messages_conversation_author_idx` holds.
     */
    authorKind: text('author_kind', { enum: ['user', 'agent', 'system'] })
      .notNull()
      .default('user'),
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
    /**
     * Partial: the turns not written as a person, which addressed-only reads look up by
     * author (an agent's aliases are agents). People's turns cost this index nothing;
     * `conversation_authors` says who wrote in a conversation, and as what.
     */
    index('messages_conversation_author_idx')
      .on(t.conversationId, t.participantId, t.timestamp)
      .where(sql`${t.authorKind} <> 'user'`),
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
    /** The turns with attachments: what the `message_attachments` view reads. */
    index('messages_attachments_idx')
      .on(t.timestamp)
      .where(sql`${t.attachments} is not null`),
    /** The few thread turns, by the turn they retell: forgetting finds a person's threads. */
    index('messages_thread_parent_idx')
      .on(sql`json_extract(${t.metadata}, '$.threadParent.id')`)
      .where(sql`json_extract(${t.metadata}, '$.threadParent.id') is not null`),
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

/**
 * Reactions people (and agents) put on turns, one row per reaction added: `removed_at` is set
 * when it is taken back. A reaction is not a turn.
 */
export const messageReactions = sqliteTable(
  'message_reactions',
  {
    messageSeq: integer('message_seq')
      .notNull()
      .references(() => messages.seq, { onDelete: 'cascade' }),
    /** The turn's colloquy id (`messages.id`). */
    messageId: text('message_id').notNull(),
    participantId: text('participant_id').notNull(),
    /** The emoji, or a custom emoji's name. */
    reaction: text('reaction').notNull(),
    addedAt: text('added_at').notNull(),
    removedAt: text('removed_at'),
  },
  (t) => [
    index('message_reactions_message_idx').on(t.messageSeq, t.participantId, t.reaction),
    /** A person's reaction is open on a turn once. */
    uniqueIndex('message_reactions_open_uq')
      .on(t.messageSeq, t.participantId, t.reaction)
      .where(sql`${t.removedAt} is null`),
    index('message_reactions_added_idx').on(t.addedAt),
  ],
);

/**
 * Who ever wrote in each conversation, and as what kind: one row per conversation, author and
 * `author_kind`, added by a trigger when a turn is inserted (written once, not per turn), so
 * a read knows whether an author's turns there are all in `messages_conversation_author_idx`.
 * It can name a pair whose turns were deleted since: reads check the turns too.
 */
export const conversationAuthors = sqliteTable(
  'conversation_authors',
  {
    conversationId: text('conversation_id').notNull(),
    participantId: text('participant_id').notNull(),
    authorKind: text('author_kind', { enum: ['user', 'agent', 'system'] }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.conversationId, t.participantId, t.authorKind] })],
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

/**
 * One row per message whose `once` buttons a press used (`metadata.interaction.uses`), written
 * in the commit that stores that press: a second press of the message cannot take it too, and
 * is stored refused `used`.
 */
export const usedMessages = sqliteTable('used_messages', {
  messageSeq: integer('message_seq')
    .primaryKey()
    .references(() => messages.seq, { onDelete: 'cascade' }),
  /** The colloquy id of the press that used it (`messages.id`). */
  pressId: text('press_id').notNull(),
});

/**
 * One agent's work on one turn (`src/runs.ts`): written `pending` with the turn, `running`
 * when the agent starts, and `answered` / `failed` / `unconfirmed` / `expired` when it ends.
 */
export const agentRuns = sqliteTable(
  'agent_runs',
  {
    /** `<inbound turn id>:<agent id>`, `:edit:<n>` added for a re-run after an edit. */
    id: text('id').primaryKey(),
    /** The colloquy id of the turn answered (`messages.id`). */
    messageId: text('message_id').notNull(),
    conversationId: text('conversation_id').notNull(),
    agentId: text('agent_id').notNull(),
    status: text('status', {
      enum: ['pending', 'running', 'answered', 'failed', 'expired', 'unconfirmed'],
    }).notNull(),
    createdAt: text('created_at').notNull(),
    startedAt: text('started_at'),
    finishedAt: text('finished_at'),
    model: text('model'),
    inputTokens: integer('input_tokens'),
    outputTokens: integer('output_tokens'),
    /** The colloquy id of the reply turn (`messages.id`), recorded before it is sent. */
    replyId: text('reply_id'),
    error: text('error'),
    attempts: integer('attempts').notNull().default(0),
    /** The assembled prompt as JSON, only when the bot records prompts. */
    prompt: text('prompt'),
  },
  (t) => [
    index('agent_runs_message_idx').on(t.messageId),
    index('agent_runs_reply_idx')
      .on(t.replyId)
      .where(sql`${t.replyId} is not null`),
    /** Recovery reads the unfinished runs: a small partial index. */
    index('agent_runs_unfinished_idx')
      .on(t.status, t.createdAt)
      .where(sql`${t.status} in ('pending', 'running')`),
    index('agent_runs_created_idx').on(t.createdAt),
    /** A conversation's runs: the drain reads its unfinished ones, forgetting and deleting all. */
    index('agent_runs_conversation_idx').on(t.conversationId, t.status),
  ],
);

/** A few values the runtime keeps between runs (the Discord gateway session), by key. */
export const colloquyState = sqliteTable('colloquy_state', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: text('updated_at').notNull(),
});

/**
 * Named, expiring holds shared by every instance on one database (`src/leases.ts`): one agent
 * run at a time per conversation, one Telegram poller per token, one owner per Discord shard.
 */
export const leases = sqliteTable('leases', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  /** Changes whenever another holder takes the lease. */
  token: text('token').notNull(),
  /** ISO 8601 UTC on the database's clock. */
  expiresAt: text('expires_at').notNull(),
});

/**
 * The posts the bot starts (`bot.send`), one row each, the queue they are delivered from: a
 * post due later waits here, and the instance that claims it (until `claimed_until`) sends it.
 * Once sent, its turn (`messages.id` = `id`, `metadata.origin = 'post'`) is the record.
 */
export const scheduledPosts = sqliteTable(
  'scheduled_posts',
  {
    id: text('id').primaryKey(),
    conversationId: text('conversation_id').notNull(),
    channelType: text('channel_type').notNull(),
    /** The post's text and options, JSON (`PostMessage`). */
    message: text('message').notNull(),
    /** Who it is from, JSON (`Participant`). */
    participant: text('participant').notNull(),
    /** ISO 8601 UTC. */
    dueAt: text('due_at').notNull(),
    /** `pending`, `sent`, `failed` or `unconfirmed`. */
    status: text('status').notNull(),
    createdAt: text('created_at').notNull(),
    claimedBy: text('claimed_by'),
    claimedUntil: text('claimed_until'),
    error: text('error'),
  },
  (t) => [
    index('scheduled_posts_due_idx')
      .on(t.dueAt)
      .where(sql`${t.status} = 'pending'`),
  ],
);

export type AgentRunRow = typeof agentRuns.$inferSelect;
export type ConversationRow = typeof conversations.$inferSelect;
export type ParticipantRow = typeof participants.$inferSelect;
export type MessageRow = typeof messages.$inferSelect;
export type MessageMentionRow = typeof messageMentions.$inferSelect;
export type MessageRevisionRow = typeof messageRevisions.$inferSelect;
