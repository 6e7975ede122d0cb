import type { PostQueue } from './posts.js';
import { applyReaction, type MessageReaction, type ReactionChange } from './reactions.js';
import { concerns, repliesTo } from './agent.js';
import { conversationExists, placeOf, redactTurn } from './conversations.js';
import { searchKeys } from './search-words.js';
import type { ClaimedRuns, Lease } from './leases.js';
import type {
  AppendResult,
  CommitResult,
  ConversationStore,
  ConversationSummary,
  ConversationUpdate,
  ForgetOptions,
  GetOptions,
  ListConversationsOptions,
  NewConversation,
  Page,
  SearchOptions,
  StoreOperation,
} from './store.js';
import { isBefore, normalizeTimestamp } from './timestamp.js';
import { capByTokens, defaultTokenizer, type Tokenizer } from './tokenizer.js';
import { isoTimestamp, withMetadata } from './types.js';
import type { AgentRun, FlowOperation, RunQuery } from './runs.js';
import type {
  MessageDeletion,
  MessageEdit,
  NewMessage,
  PlatformMessageRef,
  StoredMessage,
} from './types.js';
import { commitInOrder } from './memory/commit.js';
import { takesRuns, withUse } from './uses.js';
import { MemoryLeases } from './memory/leases.js';
import { decodeCursor, encodeCursor, newestActivityFirst } from './memory/listing.js';
import {
  type Conversation,
  type Row,
  NewestRows,
  insertSorted,
  optionalTimestamp,
  partRow,
  platformKey,
  platformKeyOf,
  rankBm25,
  span,
  startedBy,
  summaryOf,
} from './memory/rows.js';
import { conversationsRetelling, forgetTraces } from './memory/forget.js';
import { confirmRow } from './memory/replies.js';
import { MemoryRuns } from './memory/runs.js';
import { MemoryPostQueue } from './memory/posts.js';

export interface InMemoryStoreOptions {
  /** Most conversations kept; the least recently used one is evicted first (default 500). */
  maxConversations?: number;
  /** Most turns kept per conversation; the oldest are dropped first (default 500). */
  maxMessagesPerConversation?: number;
  /** Counts tokens for `search`'s `tokenCap` (default: `defaultTokenizer`). */
  tokenizer?: Tokenizer;
}

/**
 * A `ConversationStore` that lives in process memory: for tests, examples and bots that do
 * not need their history after a restart. Bounded: it keeps at most `maxConversations`
 * conversations (evicting the least recently used — appended to or read) and at most
 * `maxMessagesPerConversation` turns in each (dropping the oldest). A dropped turn is
 * forgotten entirely, so a late retry of it would be stored again.
 *
 * Search matches any of the query's words (`searchKeys`: case and Latin diacritics folded,
 * like the SQLite store's FTS5 index) and ranks by BM25 (ties: newest first). Edits replace
 * the text; unlike the SQLite store it keeps no revisions. Timestamps are normalised as the
 * SQLite store does (ISO 8601 UTC with milliseconds), so `+01:00` and `Z` times order right.
 *
 * @example
 * ```ts
 * import { InMemoryConversationStore } from 'colloquy';
 * const store = new InMemoryConversationStore({ maxConversations: 100 });
 * await store.append(turn);
 * const hits = await store.search(turn.conversationId, 'refund');
 * ```
 */
export class InMemoryConversationStore implements ConversationStore {
  readonly #maxConversations: number;
  readonly #maxMessages: number;
  readonly #tokenizer: Tokenizer;
  /** Map order is recency order: the first entry is the least recently used. */
  readonly #conversations = new Map<string, Conversation>();
  readonly #byId = new Map<string, Row>();
  readonly #byPlatform = new Map<string, Row>();
  readonly #newest = new NewestRows();
  #sequence = 0;
  readonly #runs = new MemoryRuns();
  readonly #leases = new MemoryLeases();
  readonly #posts = new MemoryPostQueue();
  readonly schedulePost: PostQueue['schedulePost'] = (...a) => this.#posts.schedulePost(...a);
  readonly claimDuePosts: PostQueue['claimDuePosts'] = (...a) => this.#posts.claimDuePosts(...a);
  readonly renewPostClaims: PostQueue['renewPostClaims'] = (...a) =>
    this.#posts.renewPostClaims(...a);
  readonly finishPost: PostQueue['finishPost'] = (...a) => this.#posts.finishPost(...a);
  readonly getPosts: PostQueue['getPosts'] = (...a) => this.#posts.getPosts(...a);

  constructor(options: InMemoryStoreOptions = {}) {
    this.#maxConversations = Math.max(1, options.maxConversations ?? 500);
    this.#maxMessages = Math.max(1, options.maxMessagesPerConversation ?? 500);
    this.#tokenizer = options.tokenizer ?? defaultTokenizer;
  }

  async append(given: NewMessage): Promise<AppendResult> {
    return this.#appendNow(given);
  }

  #appendNow(given: NewMessage): AppendResult {
    const input = withMetadata(given);
    const existing = this.#byId.get(input.id) ?? this.#byPlatform.get(platformKeyOf(input));
    if (existing) return { message: structuredClone(existing.message), inserted: false };

    const timestamp = normalizeTimestamp(input.timestamp, 'timestamp', {
      conversationId: input.conversationId,
      messageId: input.id,
    });
    let message: StoredMessage = {
      ...structuredClone(input),
      timestamp,
      sequence: ++this.#sequence,
    };
    const conversation = this.#touch(message.conversationId) ?? this.#add(startedBy(message));
    const { used } = conversation;
    message = withUse(message, (uses, id) => used.set(uses, used.get(uses) ?? id).get(uses)!);
    const row: Row = { message, words: searchKeys(message.content) };
    insertSorted(conversation.rows, row);
    this.#index(row);
    this.#newest.add(row);
    const { info } = conversation;
    if (conversation.rows.length === 1) {
      // Its first turn (a conversation created empty spanned its creation time until now).
      info.firstMessageAt = info.lastMessageAt = message.timestamp;
    }
    if (message.timestamp < info.firstMessageAt) info.firstMessageAt = message.timestamp;
    if (message.timestamp > info.lastMessageAt) info.lastMessageAt = message.timestamp;
    info.channelName ??= message.metadata.channelName;
    while (conversation.rows.length > this.#maxMessages) {
      const oldest = conversation.rows.shift();
      if (oldest) this.#unindex(oldest);
    }
    return { message: structuredClone(message), inserted: true };
  }

  /** Agent runs, by the turn they answer or by status, oldest first. */
  async getRuns(query: RunQuery): Promise<AgentRun[]> {
    return this.#runs.find(query, (id) => this.#byId.get(id)?.message);
  }

  async getState(key: string): Promise<string | undefined> {
    return this.#runs.state(key);
  }

  /** Takes `name` when free or expired, or extends it for its holder (one process only). */
  async acquireLease(name: string, holder: string, ttlMs: number): Promise<Lease | undefined> {
    return this.#leases.acquire(name, holder, ttlMs);
  }

  async renewLease(lease: Lease, ttlMs: number): Promise<Lease | undefined> {
    return this.#leases.renew(lease, ttlMs);
  }

  async releaseLease(lease: Lease): Promise<void> {
    this.#leases.release(lease);
  }

  async claimUnfinishedRuns(holder: string, ttlMs: number): Promise<ClaimedRuns[]> {
    const unfinished = await this.getRuns({ statuses: ['pending', 'running'] });
    return this.#leases.claim(unfinished, holder, ttlMs);
  }

  /** Applies `ops` in order, each failing alone; one result per op. */
  commit(ops: readonly StoreOperation[]): Promise<CommitResult[]> {
    return commitInOrder(this, ops, (op) => this.#applyFlow(op));
  }

  /** Applies one write of agent work (see `FlowOperation`) at once. */
  #applyFlow(op: FlowOperation): unknown {
    switch (op.kind) {
      case 'run': {
        const turn = this.#byId.get(op.run.messageId)?.message;
        if (op.create === true && turn !== undefined && !takesRuns(turn)) return undefined;
        this.#runs.write(op.run, op.create);
        return undefined;
      }
      case 'state':
        this.#runs.setState(op.key, op.value);
        return undefined;
      case 'reply': {
        const result = this.#appendNow(op.message);
        const row = this.#byId.get(op.message.id);
        if (result.inserted && row !== undefined) row.message.delivery = 'sending';
        return result;
      }
      case 'confirm': {
        const { id, conversationId, messageIds, delivery } = op.confirmation;
        const row = this.#byId.get(id);
        if (row === undefined || row.message.conversationId !== conversationId) return false;
        // Refused, nothing went out: no turn was said, so no row is kept.
        if (delivery === 'failed' && messageIds.length === 0)
          return this.#remove((message) => message.id === id) > 0;
        const conversation = this.#conversations.get(conversationId);
        if (confirmRow(row, op.confirmation, conversation)) {
          this.#byPlatform.set(platformKeyOf(row.message), row);
        }
        return true;
      }
    }
  }

  async get(conversationId: string, options: GetOptions = {}): Promise<StoredMessage[]> {
    const rows = this.#touch(conversationId)?.rows ?? [];
    const limit = options.limit ?? 100;
    const participants = options.participantIds && new Set(options.participantIds);
    const since = optionalTimestamp(options.sinceTimestamp, 'sinceTimestamp');
    const before = optionalTimestamp(options.before, 'before');
    const found: StoredMessage[] = [];
    for (let i = rows.length - 1; i >= 0 && found.length < limit; i--) {
      const m = rows[i]!.message;
      if (m.metadata.isSummary === true && !options.includeSummaries) continue;
      if (m.deletedAt !== undefined && !options.includeDeleted) continue;
      if (options.scope !== undefined && m.scope !== options.scope) continue;
      if (since !== undefined && m.timestamp < since) continue;
      if (before !== undefined && m.timestamp >= before) continue;
      if (participants && !participants.has(m.participant.id)) continue;
      if (options.concerning && !concerns(m, options.concerning.aliases)) continue;
      if (options.replyTo && !repliesTo(m, options.replyTo)) continue;
      found.push(structuredClone(m));
    }
    return found.reverse();
  }

  async search(
    conversationId: string,
    query: string,
    options: SearchOptions = {},
  ): Promise<StoredMessage[]> {
    const terms = [...new Set(searchKeys(query))];
    const rows = this.#touch(conversationId)?.rows ?? [];
    if (terms.length === 0 || rows.length === 0) return [];
    const docs = rows.filter(
      (r) => r.message.deletedAt === undefined && !r.message.metadata.isSummary,
    );
    const ranked = rankBm25(docs, terms);
    const top = ranked.slice(0, options.limit ?? 10).map((r) => r.message);
    return capByTokens(top, options.tokenCap ?? 2000, this.#tokenizer).map((m) =>
      structuredClone(m),
    );
  }

  async deleteMessages(conversationId: string, ids: string[]): Promise<number> {
    const wanted = new Set(ids);
    return this.#remove((m) => m.conversationId === conversationId && wanted.has(m.id));
  }

  async listConversations(
    options: ListConversationsOptions = {},
  ): Promise<Page<ConversationSummary>> {
    const limit = Math.max(1, options.limit ?? 50);
    const offset = Math.max(0, Math.floor(options.offset ?? 0));
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    const wrote = (c: Conversation, id: string, kind?: string) =>
      c.rows.some(
        (r) =>
          r.message.participant.id === id &&
          (kind === undefined || r.message.participant.kind === kind),
      );
    const matching = [...this.#conversations.values()]
      .filter(
        (c) =>
          (options.channelType === undefined || c.info.channelType === options.channelType) &&
          (options.participantId === undefined || wrote(c, options.participantId)) &&
          (options.agentId === undefined || wrote(c, options.agentId, 'agent')),
      )
      .map((c) => c.info)
      .sort(newestActivityFirst)
      .filter((info) => after === undefined || newestActivityFirst(info, after) > 0)
      .slice(offset);
    const items = matching.slice(0, limit).map((info) => this.#summary(info.id)!);
    const last = items[items.length - 1];
    const more = matching.length > limit && last !== undefined;
    return more ? { items, nextCursor: encodeCursor(last) } : { items };
  }

  async createConversation(input: NewConversation): Promise<ConversationSummary> {
    if (this.#conversations.has(input.id)) throw conversationExists(input.id);
    const now = isoTimestamp();
    const info: Conversation['info'] = {
      id: input.id,
      ...placeOf(input),
      firstMessageAt: now,
      lastMessageAt: now,
    };
    if (input.title !== undefined) info.title = input.title;
    if (input.metadata !== undefined) info.metadata = structuredClone(input.metadata);
    this.#add({ info, rows: [], used: new Map() });
    return this.#summary(input.id)!;
  }

  async updateConversation(
    conversationId: string,
    update: ConversationUpdate,
  ): Promise<ConversationSummary | undefined> {
    const info = this.#touch(conversationId)?.info;
    if (info === undefined) return undefined;
    if (update.title === null) delete info.title;
    else if (update.title !== undefined) info.title = update.title;
    if (update.metadata === null) delete info.metadata;
    else if (update.metadata !== undefined) info.metadata = structuredClone(update.metadata);
    return this.#summary(conversationId);
  }

  async getConversation(conversationId: string): Promise<ConversationSummary | undefined> {
    return this.#summary(conversationId);
  }

  async deleteConversation(conversationId: string): Promise<boolean> {
    const conversation = this.#conversations.get(conversationId);
    if (!conversation) return false;
    this.#evict(conversationId, conversation);
    this.#runs.deleteConversation(conversationId);
    return true;
  }

  async forgetParticipant(participantId: string, options: ForgetOptions = {}): Promise<number> {
    const redact = options.mode === 'redact';
    const theirs = (m: StoredMessage) => m.participant.id === participantId;
    let count = 0;
    forgetTraces(this.#conversations.values(), participantId, redact);
    const retelling = new Set(conversationsRetelling(this.#conversations.values(), theirs));
    const wrote = new Set<string>();
    for (const conversation of [...this.#conversations.values()]) {
      if (!retelling.has(conversation)) continue;
      wrote.add(conversation.info.id);
      // A rolling summary can retell what the person said: those of their conversations go.
      conversation.rows = conversation.rows.filter((row) => {
        const m = row.message;
        const summary = m.metadata.isSummary === true;
        if (theirs(m) && !summary) count++;
        if (!summary && (redact || !theirs(m))) return true;
        this.#unindex(row);
        return false;
      });
      for (const row of conversation.rows) {
        if (!theirs(row.message)) continue;
        row.message = redactTurn(row.message);
        row.words = [];
      }
      // As in SQLite: a conversation left empty goes, the others span what remains.
      const { info, rows } = conversation;
      if (rows.length === 0) {
        this.#evict(info.id, conversation);
        continue;
      }
      span(conversation);
    }
    // A recorded prompt holds the turns of its conversation: those that can hold theirs go.
    this.#runs.forgetPrompts(wrote);
    return count;
  }

  async recordEdit(edit: MessageEdit): Promise<boolean> {
    const row = this.#byPlatform.get(platformKey(edit));
    if (!row) return false;
    const editedAt = normalizeTimestamp(edit.editedAt, 'editedAt');
    if (isBefore(editedAt, row.message.editedAt)) return true;
    row.message.content = edit.content;
    row.message.editedAt = editedAt;
    row.words = searchKeys(edit.content);
    return true;
  }

  async recordDeletion(deletion: MessageDeletion): Promise<boolean> {
    const row = this.#byPlatform.get(platformKey(deletion)) ?? this.#partRow(deletion);
    if (!row) return false;
    row.message.deletedAt = normalizeTimestamp(deletion.deletedAt, 'deletedAt');
    return true;
  }

  async recordReaction(change: ReactionChange): Promise<boolean> {
    const row = this.#byPlatform.get(platformKey(change)) ?? this.#partRow(change);
    if (!row) return false;
    const at = normalizeTimestamp(change.at, 'at');
    row.reactions = applyReaction(row.reactions ?? [], { ...change, at });
    return true;
  }

  async getReactions(conversationId: string, messageId: string): Promise<MessageReaction[]> {
    const row = this.#byId.get(messageId);
    if (row?.message.conversationId !== conversationId) return [];
    return structuredClone(row.reactions ?? []);
  }

  async getSummary(conversationId: string, agentId: string): Promise<StoredMessage | undefined> {
    let newest: StoredMessage | undefined;
    for (const { message: m } of this.#touch(conversationId)?.rows ?? []) {
      const mine = m.metadata.isSummary === true && m.metadata.summaryForAgentId === agentId;
      if (mine && m.deletedAt === undefined && (newest?.sequence ?? 0) < (m.sequence ?? 0)) {
        newest = m;
      }
    }
    return newest && structuredClone(newest);
  }

  async getMessage(conversationId: string, id: string): Promise<StoredMessage | undefined> {
    const row = this.#byId.get(id);
    return row?.message.conversationId === conversationId
      ? structuredClone(row.message)
      : undefined;
  }

  async findByPlatformRef(ref: PlatformMessageRef): Promise<StoredMessage | undefined> {
    const found = this.#byPlatform.get(platformKey(ref)) ?? this.#partRow(ref);
    return found && structuredClone(found.message);
  }

  async findMessage(
    conversationId: string,
    ref: PlatformMessageRef,
  ): Promise<StoredMessage | undefined> {
    // In one conversation, a later part is looked for among all its turns, however old.
    const found =
      this.#byPlatform.get(platformKey(ref)) ??
      partRow(this.#conversations.get(conversationId)?.rows ?? [], ref);
    return found?.message.conversationId === conversationId
      ? structuredClone(found.message)
      : undefined;
  }

  /** The reply one of whose later parts is `ref`, among the store's newest turns. */
  #partRow(ref: PlatformMessageRef): Row | undefined {
    return this.#newest.partOf(ref, (row) => this.#byId.get(row.message.id) === row);
  }

  async close(): Promise<void> {}

  /** Marks a conversation as just used; undefined when unknown. */
  #touch(conversationId: string): Conversation | undefined {
    const conversation = this.#conversations.get(conversationId);
    if (conversation) {
      this.#conversations.delete(conversationId);
      this.#conversations.set(conversationId, conversation);
    }
    return conversation;
  }

  /** Adds a conversation, evicting the least recently used beyond `maxConversations`. */
  #add(conversation: Conversation): Conversation {
    this.#conversations.set(conversation.info.id, conversation);
    while (this.#conversations.size > this.#maxConversations) {
      const [oldestId, oldest] = this.#conversations.entries().next().value!;
      this.#evict(oldestId, oldest);
    }
    return conversation;
  }

  #evict(conversationId: string, conversation: Conversation): void {
    for (const row of conversation.rows) this.#unindex(row);
    this.#conversations.delete(conversationId);
  }

  #index(row: Row): void {
    this.#byId.set(row.message.id, row);
    if (row.message.metadata.messageId !== undefined) {
      this.#byPlatform.set(platformKeyOf(row.message), row);
    }
  }

  #unindex(row: Row): void {
    this.#byId.delete(row.message.id);
    const key = platformKeyOf(row.message);
    if (this.#byPlatform.get(key) === row) this.#byPlatform.delete(key);
  }

  #remove(predicate: (message: StoredMessage) => boolean): number {
    let count = 0;
    for (const conversation of this.#conversations.values()) {
      const before = conversation.rows.length;
      conversation.rows = conversation.rows.filter((row) => {
        if (!predicate(row.message)) return true;
        this.#unindex(row);
        count++;
        return false;
      });
      if (conversation.rows.length < before) span(conversation);
    }
    return count;
  }

  #summary(conversationId: string): ConversationSummary | undefined {
    const conversation = this.#conversations.get(conversationId);
    return conversation && summaryOf(conversation);
  }
}
