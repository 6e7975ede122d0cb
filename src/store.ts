import type { MessageReaction, ReactionChange } from './reactions.js';
import type { StoreError } from './errors.js';
import type { AgentRun, FlowOperation, RunQuery } from './runs.js';
import type { ClaimedRuns, Lease } from './leases.js';
import type { PostQueue } from './posts.js';
import type {
  ChannelType,
  ConversationScope,
  MessageDeletion,
  MessageEdit,
  NewMessage,
  PlatformMessageRef,
  StoredMessage,
} from './types.js';

export interface GetOptions {
  scope?: ConversationScope;
  /** Only turns at or after this ISO timestamp. */
  sinceTimestamp?: string;
  /** Only turns strictly before this ISO timestamp. */
  before?: string;
  /** How many of the most recent matching turns to return (default 100). */
  limit?: number;
  /** Only turns written by these participants. */
  participantIds?: string[];
  /**
   * Only turns replying to one message (`metadata.replyToMessageId`, its platform id) of one
   * participant (`metadata.replyToParticipantId`), read from the replies to that participant:
   * the presses on an agent's message's buttons, say.
   */
  replyTo?: { participantId: string; messageId: string };
  /**
   * Addressed-only filter: only turns that concern this agent — written by one of `aliases`,
   * mentioning one of them, replying to one of their messages, or in a DM. Runs inside the store.
   */
  concerning?: { aliases: string[] };
  /** Include rolling-summary rows (default false: summaries are read with `getSummary`). */
  includeSummaries?: boolean;
  /** Include deleted turns (tombstones; default false). */
  includeDeleted?: boolean;
}

export interface SearchOptions {
  /** Most results (default 10). */
  limit?: number;
  /** Most tokens of content over all results (default 2000); lower-ranked results are cut first. */
  tokenCap?: number;
}

export interface ListConversationsOptions {
  channelType?: ChannelType;
  /** Only conversations this participant wrote in. */
  participantId?: string;
  /** Only conversations this agent took part in (wrote a reply, a tool row or a summary). */
  agentId?: string;
  /** Page size (default 50). */
  limit?: number;
  /** Opaque cursor from the previous page's `nextCursor`. */
  cursor?: string;
  /** Skips this many conversations first (after the cursor, when both are given): page N. */
  offset?: number;
}

export interface ConversationSummary {
  id: string;
  channelType: ChannelType;
  channelId: string;
  channelName?: string;
  threadId?: string;
  scope: ConversationScope;
  messageCount: number;
  /** The first turn's time (the creation time while it has none). */
  firstMessageAt: string;
  /** The newest turn's time (the creation time while it has none). */
  lastMessageAt: string;
  /** A name people gave it (`createConversation` / `updateConversation`). */
  title?: string;
  /** Anything your application keeps about it, stored as JSON. */
  metadata?: Record<string, unknown>;
}

/**
 * A conversation created before its first turn (`createConversation`). Where it lives
 * defaults from its id as a turn's metadata does: `channelType` from the id's prefix
 * (`telegram:42` → `telegram`, else `custom`), `channelId` the whole id, scope `channel`.
 *
 * @example
 * ```ts
 * const input: NewConversation = { id: 'support:ticket-42', title: 'Refund for order 42' };
 * ```
 */
export interface NewConversation {
  id: string;
  title?: string;
  metadata?: Record<string, unknown>;
  channelType?: ChannelType;
  channelId?: string;
  channelName?: string;
  threadId?: string;
  scope?: ConversationScope;
}

/** What `updateConversation` changes: a field left out stays, `null` clears it. */
export interface ConversationUpdate {
  title?: string | null;
  /** Replaces the whole metadata object. */
  metadata?: Record<string, unknown> | null;
}

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

export interface AppendResult {
  message: StoredMessage;
  /** False when the turn was already stored (same id, or same platform message). */
  inserted: boolean;
}

/**
 * One write capture hands a store. The store commits a batch of them in one transaction,
 * each failing alone (see `ConversationStore.commit`).
 *
 * @example
 * ```ts
 * const op: StoreOperation = { kind: 'append', message: turn };
 * ```
 */
export type StoreOperation =
  | { kind: 'append'; message: NewMessage }
  | { kind: 'edit'; edit: MessageEdit }
  | { kind: 'delete'; deletion: MessageDeletion }
  | { kind: 'reaction'; change: ReactionChange }
  | FlowOperation;

/**
 * One change capture committed to the bot's store: a new turn, an edit or a deletion. Capture
 * hands it to the bot (which copies it to agents' own stores) and `History` follows it.
 *
 * @example
 * ```ts
 * const change: CapturedChange = { kind: 'append', message: stored };
 * ```
 */
export type CapturedChange =
  | { kind: 'append'; message: StoredMessage }
  | { kind: 'edit'; edit: MessageEdit }
  | { kind: 'delete'; deletion: MessageDeletion };

/** What each kind of operation answers when it is committed. */
export interface OperationResults {
  append: AppendResult;
  /** False when the edited message is unknown. */
  edit: boolean;
  /** False when the deleted message is unknown. */
  delete: boolean;
  /** False when the reacted message is unknown. */
  reaction: boolean;
  /** A run row written (a `create` of a run already recorded writes nothing). */
  run: void;
  /** The reply turn recorded with `delivery = 'sending'` (not inserted: it was already). */
  reply: AppendResult;
  /** False when the reply turn is unknown. */
  confirm: boolean;
  state: void;
}

/**
 * One operation's outcome in a batch: its value, or the error that kept it out (a
 * `StoreError` whose `transient` says whether trying again can succeed).
 */
export type CommitResult<K extends StoreOperation['kind'] = StoreOperation['kind']> =
  { ok: true; value: OperationResults[K] } | { ok: false; error: StoreError };

export interface ForgetOptions {
  /**
   * `delete` removes the rows (default); `redact` keeps them with every word of theirs blanked
   * (text, name, files, Slack's raw text, a command's arguments).
   */
  mode?: 'delete' | 'redact';
}

/**
 * Among how many of the store's newest turns (by sequence) a split reply's later part is looked
 * for when a reaction or a deletion names it, or `findByPlatformRef` does: a message the store
 * does not have costs a bounded read however long the record. Every store keeps this window.
 */
export const PARTS_WITHIN = 10_000;

/**
 * The calls every store has: the seed calls (`append`, `get`, `search`, `deleteMessages`) and
 * the conversation-level calls. A store with only these keeps the log and nothing of the bot's
 * work in progress (see `RunLedger`).
 *
 * @example
 * ```ts
 * import { InMemoryConversationStore } from 'colloquy';
 * const log: ConversationLog = new InMemoryConversationStore();
 * await log.append(turn);
 * const recent = await log.get(turn.conversationId, { limit: 20 });
 * ```
 */
export interface ConversationLog {
  /**
   * Stores a turn once: a repeated `id`, or a repeated platform message, stores nothing. A press
   * that uses a message's `once` buttons (`usesOf`) takes that message's one use with it, or,
   * when another press took it, is stored (and answered) as `refusedUse` makes it.
   */
  append(message: NewMessage): Promise<AppendResult>;
  /** The most recent `limit` matching turns, oldest first (ties: insertion order). */
  get(conversationId: string, options?: GetOptions): Promise<StoredMessage[]>;
  /** Relevance-ranked search in one conversation; the query is plain words, never syntax. */
  search(conversationId: string, query: string, options?: SearchOptions): Promise<StoredMessage[]>;
  /** Deletes these ids within this conversation only; returns how many went. */
  deleteMessages(conversationId: string, ids: string[]): Promise<number>;

  listConversations(options?: ListConversationsOptions): Promise<Page<ConversationSummary>>;
  getConversation(conversationId: string): Promise<ConversationSummary | undefined>;
  /** Deletes a conversation, all its turns and its agent runs; false when there was none. */
  deleteConversation(conversationId: string): Promise<boolean>;
  /**
   * Creates an empty conversation with a title and metadata, before its first turn (turns
   * appended later with its id join it). A StoreError when the id is taken.
   */
  createConversation(conversation: NewConversation): Promise<ConversationSummary>;
  /** Sets or clears a conversation's title and metadata; undefined when it is unknown. */
  updateConversation(
    conversationId: string,
    update: ConversationUpdate,
  ): Promise<ConversationSummary | undefined>;
  /**
   * Removes (or redacts) everything a participant wrote, everywhere, and the rolling summaries
   * and recorded run prompts of the conversations they wrote in and of the threads under their
   * turns (`metadata.threadParent`); returns how many of their turns (summaries an agent wrote
   * are not counted).
   */
  forgetParticipant(participantId: string, options?: ForgetOptions): Promise<number>;

  /**
   * Records an edit; the previous text is kept as a revision when the text changes (an edit of
   * the buttons alone keeps none). An edit older than the turn's `editedAt` (a redelivery after
   * a later edit) changes nothing and answers true. False when the message is unknown, and for a later part of a
   * split reply (`metadata.partMessageIds`): a part's text is not the reply's.
   */
  recordEdit(edit: MessageEdit): Promise<boolean>;
  /**
   * Marks a message deleted (a tombstone): the turn it is, or the reply split into parts of which
   * it is one (among the newest `PARTS_WITHIN` turns). False when the message is unknown.
   */
  recordDeletion(deletion: MessageDeletion): Promise<boolean>;
  /**
   * Records a reaction added or removed on a stored message (found as `findByPlatformRef` finds
   * it: a reaction on any part of a split reply is on the reply). An addition before a
   * removal of the same person's same reaction, or a removal before the open one's addition,
   * changes nothing (a redelivery); at equal times the order of arrival decides. False when
   * the message is unknown (`message_reactions` in SQL).
   */
  recordReaction(change: ReactionChange): Promise<boolean>;
  /** The reactions on a turn (by its colloquy id), oldest first, removed ones included. */
  getReactions(conversationId: string, messageId: string): Promise<MessageReaction[]>;
  /** The newest rolling summary an agent stored for a conversation. */
  getSummary(conversationId: string, agentId: string): Promise<StoredMessage | undefined>;
  /**
   * One turn by its colloquy id, only if it belongs to this conversation (deleted turns
   * included: check `deletedAt`).
   */
  getMessage(conversationId: string, id: string): Promise<StoredMessage | undefined>;
  /**
   * The turn of this conversation a platform message is, read by its platform id however old
   * it is: the turn whose platform message is `ref.messageId`, or a reply split into parts of
   * which it is one (`metadata.partMessageIds`). Deleted turns included: check `deletedAt`.
   */
  findMessage(conversationId: string, ref: PlatformMessageRef): Promise<StoredMessage | undefined>;
  /**
   * The turn whose platform message is `ref.messageId`, or the reply split into parts of which
   * it is one (`metadata.partMessageIds`) among the store's newest `PARTS_WITHIN` turns, in
   * whichever conversation it is (a reaction names no conversation); undefined when unknown.
   */
  findByPlatformRef(ref: PlatformMessageRef): Promise<StoredMessage | undefined>;

  /** The file the store keeps its data in, when it has one (capture's dead letters go beside it). */
  readonly path?: string;
  /** Closes what the store opened (files, connections); a store given what it uses leaves it open. */
  close(): Promise<void>;
}

/**
 * What a store needs to keep the bot's work in progress: one batch write path, the agent runs
 * (`agent_runs`, the one queue of agent work) and channels' small values. A store without it
 * runs the bot in a weaker mode, said once at start: each write goes through the log's calls
 * one by one, no run is recorded, and work a stop interrupts is not resumed.
 *
 * @example
 * ```ts
 * const [appended] = await ledger.commit([{ kind: 'append', message: turn }]);
 * const open = await ledger.getRuns({ conversationId, statuses: ['pending', 'running'] });
 * ```
 */
export interface RunLedger {
  /**
   * Commits `ops` in one transaction, in order, each failing alone (a failed one leaves the
   * others written), and answers one result per op, in order. A press's use of a message is
   * decided in the commit that stores it (see `append`); no run is created for a turn stored
   * refused (`takesRuns`).
   */
  commit(ops: readonly StoreOperation[]): Promise<CommitResult[]>;
  /** Agent runs (`agent_runs`), by the turn answered or by status, oldest first, each with how far its reply went. */
  getRuns(query: RunQuery): Promise<AgentRun[]>;
  /** A value kept with `{ kind: 'state' }` (the Discord gateway session). */
  getState(key: string): Promise<string | undefined>;
}

/**
 * What lets several instances share a store (docs/leases.md): named leases on the database's
 * clock, and the hand-over of a dead instance's unfinished runs.
 *
 * @example
 * ```ts
 * const lease = await leasing.acquireLease('conversation:telegram:42', holder, 30_000);
 * if (lease !== undefined) await leasing.releaseLease(lease);
 * ```
 */
export interface Leasing {
  /**
   * Takes the lease `name` for `ttlMs` when it is free or expired, or extends it when `holder`
   * already holds it (same token); undefined while someone else holds it.
   */
  acquireLease(name: string, holder: string, ttlMs: number): Promise<Lease | undefined>;
  /** Extends a lease still held by this token; undefined when it was lost to another holder. */
  renewLease(lease: Lease, ttlMs: number): Promise<Lease | undefined>;
  /** Gives a lease up; does nothing when the token no longer holds it. */
  releaseLease(lease: Lease): Promise<void>;
  /**
   * Hands `holder` the unfinished (pending or running) runs of conversations nobody holds:
   * for each, it takes the `conversation:<id>` lease for `ttlMs` and answers the lease with
   * the runs, oldest first. A conversation goes to one caller only, even when several
   * instances ask at once.
   */
  claimUnfinishedRuns(holder: string, ttlMs: number): Promise<ClaimedRuns[]>;
}

/**
 * Where conversations live: a `ConversationLog`, with a `RunLedger` and `Leasing` when it has
 * them (every store colloquy ships but Redis has both). The bot reads which it has once, at
 * start (`capabilitiesOf`). One contract suite (test/contracts/store-contract.ts) runs against
 * every implementation.
 *
 * @example
 * ```ts
 * import { InMemoryConversationStore } from 'colloquy';
 * const store: ConversationStore = new InMemoryConversationStore();
 * ```
 */
export interface ConversationStore
  extends ConversationLog, Partial<RunLedger>, Partial<Leasing>, Partial<PostQueue> {}

/** What a store can do, read once from its members. */
export interface StoreCapabilities {
  log: ConversationLog;
  /** The store itself, when it keeps runs. */
  ledger?: ConversationLog & RunLedger;
  /** The store itself, when it keeps runs and leases (it can be shared). */
  leasing?: ConversationLog & RunLedger & Leasing;
  /** The store itself, when it keeps the posts the bot starts (`scheduled_posts`). */
  posts?: ConversationLog & PostQueue;
}

/**
 * Reads what `store` can do, once: the one place the core asks which members a store has.
 *
 * @example
 * ```ts
 * const { ledger } = capabilitiesOf(store);
 * if (ledger === undefined) logger.warn('this store keeps no agent runs');
 * ```
 */
export function capabilitiesOf(store: ConversationStore): StoreCapabilities {
  const ledger =
    store.commit !== undefined && store.getRuns !== undefined && store.getState !== undefined
      ? (store as ConversationLog & RunLedger)
      : undefined;
  const leasing =
    ledger !== undefined &&
    store.acquireLease !== undefined &&
    store.renewLease !== undefined &&
    store.releaseLease !== undefined &&
    store.claimUnfinishedRuns !== undefined
      ? (store as ConversationLog & RunLedger & Leasing)
      : undefined;
  const posts =
    store.schedulePost !== undefined &&
    store.claimDuePosts !== undefined &&
    store.finishPost !== undefined &&
    store.getPosts !== undefined
      ? (store as ConversationLog & PostQueue)
      : undefined;
  return {
    log: store,
    ...(ledger !== undefined && { ledger }),
    ...(leasing !== undefined && { leasing }),
    ...(posts !== undefined && { posts }),
  };
}
