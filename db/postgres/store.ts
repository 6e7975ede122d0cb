import type { MessageReaction, ReactionChange } from '../../src/reactions.js';
import { listReactions, recordReaction } from './reactions.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { conversationExists, placeOf } from '../../src/conversations.js';
import { ColloquyError, StoreError } from '../../src/errors.js';
import { type ClaimedRuns, type Lease, checkLeaseName, checkLeaseTtl } from '../../src/leases.js';
import { claimTerms, type NewPost, type PostStatus, type ScheduledPost } from '../../src/posts.js';
import * as posts from './posts.js';
import type { AgentRun, RunQuery } from '../../src/runs.js';
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
} from '../../src/store.js';
import { isoTimestamp, withMetadata } from '../../src/types.js';
import type {
  MessageDeletion,
  MessageEdit,
  NewMessage,
  PlatformMessageRef,
  StoredMessage,
} from '../../src/types.js';
import { type ConversationRow, listingQuery, pageOf, toSummary } from '../listing.js';
import { buildGetQuery } from '../queries.js';
import { fromValues, normalizeTimestamp, toInsert, toMessage } from '../rows.js';
import { isBefore } from '../../src/timestamp.js';
import {
  capResults,
  type Candidate,
  type QueryWord,
  candidatesPerWord,
  rankCandidates,
  searchRequest,
} from '../search.js';
import {
  type PostgresStoreOptions,
  isCurrent,
  migratePostgres,
  openPool,
  redactUrl,
  withClient,
} from './connection.js';
import {
  conflictBackoffMs,
  describePgError,
  isRolledBackConflict,
  isTransientPg,
  storableJson,
  withoutNul,
} from './errors.js';
import { MoreToLock, deleteConversation, deleteTurns, forget } from './deletes.js';
import { commitTransaction, isRefused, lockSharedRows } from './locks.js';
import * as runs from './runs.js';
import { appendMany, createRuns } from './batch.js';
import { recordUse } from './uses.js';
import { PG, POSTGRES_DIALECT, positional, searchWordSql } from './statements.js';

export type { PostgresStoreOptions } from './connection.js';

/** How many times a transaction is tried when Postgres rolls it back for a conflict. */
const TRANSACTION_ATTEMPTS = 4;

/**
 * The Postgres `ConversationStore`, for a bot that outgrows one machine: several instances
 * share one database, and the database's unique keys and leases decide what each one does.
 * The schema is migrated at open, under an advisory lock (docs/postgres.md).
 *
 * @example
 * ```ts
 * import { PostgresConversationStore } from 'colloquy/postgres';
 * const store = await PostgresConversationStore.open({ connectionString: process.env.DATABASE_URL });
 * await store.append(turn);
 * const recent = await store.get(turn.conversationId, { limit: 20 });
 * await store.close();
 * ```
 */
export class PostgresConversationStore implements ConversationStore {
  /** The store's connection pool (node-postgres), for raw SQL next to the store. */
  readonly pool: pg.Pool;
  /** Where it connects, password masked. */
  readonly where: string;
  readonly #ready: Promise<void>;
  #closed = false;

  /** Connects lazily: the first call waits for the schema (or `await store.ready()`). */
  constructor(options: PostgresStoreOptions | string = {}) {
    const given = typeof options === 'string' ? { connectionString: options } : options;
    this.pool = openPool(given);
    this.where = redactUrl(given.connectionString);
    this.#ready = this.#prepare(given.readonly === true);
    // Every call awaits it and reports its failure; this keeps it from being "unhandled".
    this.#ready.catch(() => {});
  }

  /**
   * Opens a store and waits until its schema is current: a database that cannot be reached
   * or was written by a newer colloquy is a StoreError here, not at the first turn.
   *
   * @example
   * ```ts
   * const store = await PostgresConversationStore.open('postgres://postgres@127.0.0.1/colloquy');
   * ```
   */
  static async open(options: PostgresStoreOptions | string = {}) {
    const store = new PostgresConversationStore(options);
    try {
      await store.ready();
    } catch (error) {
      await store.pool.end().catch(() => {});
      throw error;
    }
    return store;
  }

  /** Resolves once the schema is current (migrated, or checked when read-only). */
  ready(): Promise<void> {
    return this.#ready;
  }

  async #prepare(readonly: boolean): Promise<void> {
    try {
      if (!readonly) await migratePostgres(this.pool, this.where);
      else if (!(await isCurrent(this.pool))) {
        throw new StoreError(
          `${this.where} has no current colloquy schema; open it once without readonly to ` +
            `migrate it`,
          { transient: false },
        );
      }
    } catch (error) {
      if (error instanceof ColloquyError) throw error;
      throw new StoreError(`cannot open ${this.where}: ${describePgError(error)}`, {
        cause: error,
        transient: isTransientPg(error),
      });
    }
  }

  append(message: NewMessage): Promise<AppendResult> {
    return this.#guard('append a turn', message.conversationId, () =>
      this.#transaction(
        (client) => this.#append(client, message, null),
        [{ kind: 'append', message }],
      ),
    );
  }

  /**
   * Commits `ops` in one transaction and answers one result per op. When one of them fails,
   * the batch is rolled back and each op is committed alone, so only the failing ones are
   * refused. Never rejects.
   *
   * @example
   * ```ts
   * const [result] = await store.commit([{ kind: 'append', message: turn }]);
   * ```
   */
  async commit(ops: readonly StoreOperation[]): Promise<CommitResult[]> {
    const failed = (op: StoreOperation, error: unknown): CommitResult => ({
      ok: false,
      error: this.#error(`store ${op.kind}`, conversationOf(op), error),
    });
    try {
      await this.#open('commit');
      const values = await this.#transaction(async (client) => {
        const answers: unknown[] = [];
        for (const group of groups(ops)) {
          if ('alone' in group) answers.push(await this.#apply(client, group.alone));
          else answers.push(...(await this.#applyGroup(client, group.together)));
        }
        return answers;
      }, ops);
      return values.map((value) => ({ ok: true, value }) as CommitResult);
    } catch (error) {
      // Lost as a whole (unreachable, a deadlock, a conflict with another instance): tried
      // again later. Refused by one op (a constraint, a bad value): the others go in alone.
      if (ops.length === 1 || this.#error('commit', undefined, error).transient === true) {
        return ops.map((op) => failed(op, error));
      }
    }
    const results: CommitResult[] = [];
    for (const op of ops) {
      try {
        const value = await this.#transaction((client) => this.#apply(client, op), [op]);
        results.push({ ok: true, value } as CommitResult);
      } catch (error) {
        results.push(failed(op, error));
      }
    }
    return results;
  }

  async #apply(client: pg.PoolClient, op: StoreOperation): Promise<unknown> {
    switch (op.kind) {
      case 'append':
        return this.#append(client, op.message, null);
      case 'edit':
        return this.#edit(client, op.edit);
      case 'delete':
        return this.#delete(client, op.deletion);
      case 'reaction':
        return recordReaction(client, { ...op.change, at: normalizeTimestamp(op.change.at, 'at') });
      case 'run':
        return runs.upsertRun(client, op.run, op.create === true);
      case 'reply':
        return this.#append(client, op.message, 'sending');
      case 'confirm': {
        const { id, conversationId } = op.confirmation;
        // Refused, nothing went out: no turn was said, so no row is kept (and the conversation
        // is recounted as the transaction commits).
        if (isRefused(op.confirmation)) {
          const { rowCount } = await client.query(PG.deleteMessages, [conversationId, [id]]);
          return (rowCount ?? 0) > 0;
        }
        return runs.confirmReply(client, op.confirmation);
      }
      case 'state':
        return runs.setState(client, op.key, op.value);
    }
  }

  /**
   * New turns and new runs side by side (what capture hands over for a burst of inbound
   * turns): the turns in one statement, the runs in another. Neither table refers to the other,
   * so writing all the turns first answers as the ops one by one would.
   */
  async #applyGroup(client: pg.PoolClient, group: readonly Groupable[]): Promise<unknown[]> {
    const answers: unknown[] = Array.from({ length: group.length });
    const appends = group.flatMap((op, i) => (op.kind === 'append' ? [{ op, i }] : []));
    if (appends.length > 0) {
      const messages: NewMessage[] = [];
      for (const { op } of appends)
        messages.push(await recordUse(client, withMetadata(op.message)));
      const { prepared, seqs } = await appendMany(client, messages);
      for (const [k, { i }] of appends.entries()) {
        const { message, timestamp } = prepared[k]!;
        const seq = seqs[k];
        answers[i] =
          seq !== undefined
            ? { message: { ...message, timestamp, sequence: seq }, inserted: true }
            : { message: await this.#existing(client, message), inserted: false };
      }
    }
    const created = group.flatMap((op) => (op.kind === 'run' ? [op.run] : []));
    if (created.length > 0) await createRuns(client, created);
    return answers;
  }

  async #append(
    db: runs.Queryable,
    given: NewMessage,
    delivery: 'sending' | null,
  ): Promise<AppendResult> {
    const message = await recordUse(db, withMetadata(given));
    const context = { conversationId: message.conversationId, messageId: message.id };
    const timestamp = normalizeTimestamp(message.timestamp, 'timestamp', context);
    const row = toInsert(message, timestamp, delivery);
    const values = withoutNul([
      row.id,
      row.conversationId,
      row.participantId,
      row.content,
      row.timestamp,
      row.scope,
      row.channelType,
      row.channelId,
      row.threadId,
      row.platformMessageId,
      row.replyToMessageId,
      row.replyToParticipantId,
      row.isSummary === 1,
      row.summaryForAgentId,
      storableJson(row.metadata),
      row.traceId,
      storableJson(row.sources),
      row.reasoning,
      row.delegationId,
      row.delegatedBy,
      row.delegatedTo,
      row.delivery,
      message.participant.kind,
      message.participant.displayName ?? null,
      message.metadata.channelName ?? null,
      message.metadata.mentions ?? [],
      storableJson(row.attachments),
    ]);
    const inserted = await db.query<{ seq: number }>(PG.append, values);
    const seq = inserted.rows[0]?.seq;
    if (seq !== undefined) {
      return { message: { ...message, timestamp, sequence: seq }, inserted: true };
    }
    return { message: await this.#existing(db, message), inserted: false };
  }

  /** The stored turn `message` repeats (same id, or same platform message). */
  async #existing(db: runs.Queryable, message: NewMessage): Promise<StoredMessage> {
    const { channelType, channelId, messageId } = message.metadata;
    const [id, platformId] = withoutNul([message.id, messageId ?? null]);
    const existing = await this.#readOne(db, PG.findDuplicate, [
      id,
      channelType,
      channelId,
      platformId,
    ]);
    if (existing === undefined) {
      // The row it collided with went between the two statements (a forget, say).
      throw new StoreError(`turn ${message.id} collided with a turn deleted meanwhile`, {
        conversationId: message.conversationId,
        messageId: message.id,
        transient: true,
      });
    }
    return existing;
  }

  async #edit(client: pg.PoolClient, edit: MessageEdit): Promise<boolean> {
    const editedAt = normalizeTimestamp(edit.editedAt, 'editedAt');
    const [content] = withoutNul([edit.content]) as [string];
    const { rows } = await client.query<{ seq: number; content: string; edited_at: string }>(
      PG.findByPlatform,
      [edit.channelType, edit.channelId, edit.messageId],
    );
    const found = rows[0];
    if (found === undefined) return false;
    // The same edit again (a redelivery, a dead letter imported twice) changes nothing, nor
    // does one older than the edit stored (a redelivery after a later edit).
    if (found.content === content && found.edited_at === editedAt) return true;
    if (isBefore(editedAt, found.edited_at)) return true;
    // A revision keeps an earlier text: an edit of the buttons alone keeps none.
    if (found.content !== content) {
      await client.query(PG.insertRevision, [found.seq, found.content, editedAt]);
    }
    await client.query(PG.applyEdit, [content, editedAt, found.seq]);
    return true;
  }

  async #delete(db: runs.Queryable, deletion: MessageDeletion): Promise<boolean> {
    const deletedAt = normalizeTimestamp(deletion.deletedAt, 'deletedAt');
    const { rowCount } = await db.query(PG.markDeleted, [
      deletion.channelType,
      deletion.channelId,
      deletion.messageId,
      deletedAt,
    ]);
    return (rowCount ?? 0) > 0;
  }

  get(conversationId: string, options: GetOptions = {}): Promise<StoredMessage[]> {
    return this.#guard('read turns', conversationId, async () => {
      const normalized: GetOptions = { ...options };
      if (options.sinceTimestamp !== undefined) {
        normalized.sinceTimestamp = normalizeTimestamp(options.sinceTimestamp, 'sinceTimestamp');
      }
      if (options.before !== undefined) {
        normalized.before = normalizeTimestamp(options.before, 'before');
      }
      const { sql, params } = buildGetQuery(conversationId, normalized, POSTGRES_DIALECT);
      const { text, values } = positional(sql, params);
      return (await this.#read(this.pool, text, values)).reverse();
    });
  }

  /**
   * Relevance-ranked search: per word, the conversation's newest matches from the GIN index,
   * then BM25 over those candidates, ranked as the SQLite and in-memory stores rank.
   */
  search(
    conversationId: string,
    query: string,
    options: SearchOptions = {},
  ): Promise<StoredMessage[]> {
    return this.#guard('search', conversationId, async () => {
      const request = searchRequest(query, options);
      if (request === undefined) return [];
      const ranked = (await this.#rank(conversationId, request.words)).slice(0, request.limit);
      if (ranked.length === 0) return [];
      const found = await this.#read(this.pool, PG.getBySeqs, [ranked]);
      const bySeq = new Map(found.map((message) => [message.sequence, message]));
      const results = ranked.flatMap((seq) => bySeq.get(seq) ?? []);
      return capResults(results, options.tokenCap);
    });
  }

  async #rank(conversationId: string, words: QueryWord[]): Promise<number[]> {
    const conversation = await this.pool.query<ConversationRow>(PG.getConversation, [
      conversationId,
    ]);
    const total = conversation.rows[0]?.message_count;
    if (total === undefined) return [];
    const found = new Map<string, number>();
    const seqs = new Set<number>();
    const limit = candidatesPerWord(words.length);
    for (const { word, key } of words) {
      const spellings = [...new Set([word, word.normalize('NFD')])];
      const { rows } = await this.pool.query<{ seq: number }>(searchWordSql(spellings.length), [
        conversationId,
        limit,
        ...spellings,
      ]);
      found.set(key, rows.length < limit ? rows.length : total);
      for (const { seq } of rows) seqs.add(seq);
    }
    if (seqs.size === 0) return [];
    const candidates = await this.pool.query<Candidate>(PG.searchCandidates, [
      [...seqs],
      conversationId,
    ]);
    return rankCandidates(
      candidates.rows,
      words.map((w) => w.key),
      total,
      found,
    );
  }

  async deleteMessages(conversationId: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    return this.#guard('delete turns', conversationId, () =>
      this.#transaction((client) => deleteTurns(client, conversationId, ids)),
    );
  }

  listConversations(options: ListConversationsOptions = {}): Promise<Page<ConversationSummary>> {
    return this.#guard('list conversations', undefined, async () => {
      const { sql, params, limit } = listingQuery(
        options,
        '(c.last_message_at, c.id) < (@cursorLast::timestamptz, @cursorId::text)',
      );
      const { text, values } = positional(sql, params);
      return pageOf((await this.pool.query<ConversationRow>(text, values)).rows, limit);
    });
  }

  getConversation(conversationId: string): Promise<ConversationSummary | undefined> {
    return this.#guard('read a conversation', conversationId, () =>
      this.#conversation(this.pool, conversationId),
    );
  }

  async #conversation(db: runs.Queryable, id: string) {
    const { rows } = await db.query<ConversationRow>(PG.getConversation, [id]);
    return rows[0] === undefined ? undefined : toSummary(rows[0]);
  }

  createConversation(input: NewConversation): Promise<ConversationSummary> {
    return this.#guard('create a conversation', input.id, async () => {
      const place = placeOf(input);
      const { rowCount } = await this.pool.query(
        PG.createConversation,
        withoutNul([
          input.id,
          place.channelType,
          place.channelId,
          place.channelName ?? null,
          place.threadId ?? null,
          place.scope,
          isoTimestamp(),
          input.title ?? null,
          input.metadata === undefined ? null : storableJson(JSON.stringify(input.metadata)),
        ]),
      );
      if ((rowCount ?? 0) === 0) throw conversationExists(input.id);
      return (await this.#conversation(this.pool, input.id))!;
    });
  }

  updateConversation(
    conversationId: string,
    update: ConversationUpdate,
  ): Promise<ConversationSummary | undefined> {
    return this.#guard('update a conversation', conversationId, async () => {
      const how = (value: unknown) =>
        value === undefined ? 'keep' : value === null ? 'clear' : 'set';
      const { rows } = await this.pool.query<ConversationRow>(
        `${PG.updateConversation} RETURNING *`,
        withoutNul([
          conversationId,
          how(update.title),
          update.title ?? null,
          how(update.metadata),
          update.metadata == null ? null : storableJson(JSON.stringify(update.metadata)),
        ]),
      );
      return rows[0] === undefined ? undefined : toSummary(rows[0]);
    });
  }

  deleteConversation(conversationId: string): Promise<boolean> {
    return this.#guard('delete a conversation', conversationId, () =>
      this.#transaction((client) => deleteConversation(client, conversationId)),
    );
  }

  /**
   * Removes (or redacts) everything a participant wrote, then vacuums the tables so the old
   * row versions go from the data files. The WAL, replicas and backups keep copies until they
   * roll over (docs/postgres.md).
   */
  async forgetParticipant(participantId: string, options: ForgetOptions = {}): Promise<number> {
    const mode = options.mode === 'redact' ? 'redact' : 'delete';
    const changes = await this.#guard('forget a participant', undefined, async () => {
      for (let known: readonly string[] = []; ;) {
        try {
          return await this.#transaction((client) => forget(client, participantId, mode, known));
        } catch (error) {
          if (!(error instanceof MoreToLock)) throw error;
          known = error.conversations;
        }
      }
    });
    // Vacuuming only hurries the space reuse; the rows are gone either way.
    await this.pool
      .query(
        'VACUUM messages, message_mentions, message_revisions, participants, conversations, agent_runs',
      )
      .catch(() => {});
    return changes;
  }

  recordEdit(edit: MessageEdit): Promise<boolean> {
    return this.#guard('record an edit', undefined, () =>
      this.#transaction((client) => this.#edit(client, edit)),
    );
  }

  recordDeletion(deletion: MessageDeletion): Promise<boolean> {
    return this.#guard('record a deletion', undefined, () => this.#delete(this.pool, deletion));
  }

  recordReaction(change: ReactionChange): Promise<boolean> {
    return this.#guard('record a reaction', undefined, () =>
      recordReaction(this.pool, { ...change, at: normalizeTimestamp(change.at, 'at') }),
    );
  }

  getReactions(conversationId: string, messageId: string): Promise<MessageReaction[]> {
    return this.#guard('read reactions', conversationId, () =>
      listReactions(this.pool, conversationId, messageId),
    );
  }

  getSummary(conversationId: string, agentId: string): Promise<StoredMessage | undefined> {
    return this.#guard('read a summary', conversationId, () =>
      this.#readOne(this.pool, PG.getSummary, [conversationId, agentId]),
    );
  }

  getMessage(conversationId: string, id: string): Promise<StoredMessage | undefined> {
    return this.#guard('read a turn', conversationId, async () => {
      const message = await this.#readOne(this.pool, PG.getById, [id]);
      return message?.conversationId === conversationId ? message : undefined;
    });
  }

  findByPlatformRef(ref: PlatformMessageRef): Promise<StoredMessage | undefined> {
    const { channelType, channelId, messageId } = ref;
    const params = [channelType, channelId, messageId];
    return this.#guard(
      'find a turn',
      undefined,
      async () =>
        (await this.#readOne(this.pool, PG.getByPlatform, params)) ??
        (await this.#readOne(this.pool, PG.getByChannelPart, params)),
    );
  }

  findMessage(conversationId: string, ref: PlatformMessageRef): Promise<StoredMessage | undefined> {
    return this.#guard('find a turn', conversationId, async () => {
      const { channelType, channelId, messageId } = ref;
      const message =
        (await this.#readOne(this.pool, PG.getByPlatform, [channelType, channelId, messageId])) ??
        (await this.#readOne(this.pool, PG.getByPart, [conversationId, messageId]));
      return message?.conversationId === conversationId ? message : undefined;
    });
  }

  /** Agent runs by turn or by status, oldest first, with how far each one's reply went. */
  getRuns(query: RunQuery): Promise<AgentRun[]> {
    return this.#guard('read agent runs', undefined, () => runs.findRuns(this.pool, query));
  }

  /** A value kept with a `state` operation. */
  getState(key: string): Promise<string | undefined> {
    return this.#guard('read state', undefined, () => runs.getState(this.pool, key));
  }

  async acquireLease(name: string, holder: string, ttlMs: number): Promise<Lease | undefined> {
    checkLeaseName(name, holder);
    checkLeaseTtl(ttlMs);
    return this.#guard('take a lease', undefined, () =>
      runs.acquireLease(this.pool, name, holder, ttlMs),
    );
  }

  async renewLease(lease: Lease, ttlMs: number): Promise<Lease | undefined> {
    checkLeaseTtl(ttlMs);
    return this.#guard('renew a lease', undefined, () => runs.renewLease(this.pool, lease, ttlMs));
  }

  async releaseLease(lease: Lease): Promise<void> {
    return this.#guard('release a lease', undefined, () => runs.releaseLease(this.pool, lease));
  }

  /** Stores a post the bot starts (see `PostQueue`). */
  async schedulePost(post: NewPost, claim?: { holder: string; ttlMs: number }): Promise<void> {
    if (claim !== undefined) checkLeaseTtl(claim.ttlMs);
    return this.#guard('store a post', post.conversationId, () =>
      posts.schedulePost(this.pool, post, claim),
    );
  }

  async claimDuePosts(
    holder: string,
    ttlMs: number,
    options: { limit?: number; takeOver?: boolean } = {},
  ): Promise<ScheduledPost[]> {
    const { limit, takeOver } = claimTerms(holder, ttlMs, options);
    return this.#guard('claim due posts', undefined, () =>
      posts.claimDuePosts(this.pool, holder, ttlMs, limit, takeOver),
    );
  }

  async renewPostClaims(holder: string, ttlMs: number): Promise<number> {
    checkLeaseTtl(ttlMs);
    return this.#guard('renew post claims', undefined, () =>
      posts.renewPostClaims(this.pool, holder, ttlMs),
    );
  }

  async finishPost(id: string, status: Exclude<PostStatus, 'pending'>, error?: string) {
    return this.#guard('end a post', undefined, () =>
      posts.finishPost(this.pool, id, status, error),
    );
  }

  async getPosts(query: { statuses?: readonly PostStatus[] } = {}): Promise<ScheduledPost[]> {
    return this.#guard('read posts', undefined, () => posts.getPosts(this.pool, query.statuses));
  }

  async claimUnfinishedRuns(holder: string, ttlMs: number): Promise<ClaimedRuns[]> {
    checkLeaseName('claimUnfinishedRuns', holder);
    checkLeaseTtl(ttlMs);
    return this.#guard('claim unfinished runs', undefined, async () => {
      const claimed = await runs.claimConversations(this.pool, holder, ttlMs);
      if (claimed.length === 0) return [];
      const unfinished = await runs.findRuns(this.pool, { statuses: ['pending', 'running'] });
      return claimed.map(({ lease, conversationId }) => ({
        lease,
        runs: unfinished.filter((run) => run.conversationId === conversationId),
      }));
    });
  }

  /** Closes the pool; later calls fail with a StoreError. Closing twice is fine. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.pool.end();
  }

  async #read(db: runs.Queryable, text: string, values: unknown[]): Promise<StoredMessage[]> {
    const { rows } = await db.query<unknown[]>({ text, values, rowMode: 'array' });
    return rows.map((row) => toMessage(fromValues(row)));
  }

  async #readOne(db: runs.Queryable, text: string, values: unknown[]) {
    return (await this.#read(db, text, values))[0];
  }

  /**
   * Runs `fn` in a transaction on one connection of the pool, first locking the rows `ops`
   * share with other instances (`lockSharedRows`). A transaction Postgres rolled back as a
   * deadlock victim or a serialization failure is run again, a few times, each after a short
   * random pause (`conflictBackoffMs`) so the instances it met do not meet again at once.
   */
  async #transaction<T>(
    fn: (client: pg.PoolClient) => Promise<T>,
    ops: readonly StoreOperation[] = [],
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await withClient(this.pool, async (client, discard) => {
          try {
            await client.query('BEGIN');
            await lockSharedRows(client, ops);
            const value = await fn(client);
            await commitTransaction(client, ops);
            return value;
          } catch (error) {
            await client.query('ROLLBACK').catch(discard);
            throw error;
          }
        });
      } catch (error) {
        if (attempt >= TRANSACTION_ATTEMPTS || !isRolledBackConflict(error)) throw error;
        await sleep(conflictBackoffMs(attempt));
      }
    }
  }

  async #open(action: string, conversationId?: string): Promise<void> {
    if (this.#closed) {
      throw new StoreError(`cannot ${action}: the store is closed`, {
        conversationId,
        transient: true,
      });
    }
    await this.#ready;
  }

  /** Runs one store call, turning Postgres failures into a StoreError with context and cause. */
  async #guard<T>(action: string, conversationId: string | undefined, fn: () => Promise<T>) {
    try {
      await this.#open(action, conversationId);
      return await fn();
    } catch (error) {
      throw this.#error(action, conversationId, error);
    }
  }

  #error(action: string, conversationId: string | undefined, error: unknown): StoreError {
    if (error instanceof StoreError) return error;
    if (error instanceof ColloquyError) return error as StoreError;
    return new StoreError(`cannot ${action}: ${describePgError(error)}`, {
      conversationId,
      cause: error,
      transient: isTransientPg(error),
    });
  }
}

/** Ops `#applyGroup` writes together: new turns and new runs. */
type Groupable =
  Extract<StoreOperation, { kind: 'append' }> | Extract<StoreOperation, { kind: 'run' }>;

function groupable(op: StoreOperation): op is Groupable {
  return op.kind === 'append' || (op.kind === 'run' && op.create === true);
}

/** `ops` in order: consecutive new turns and new runs together, every other op alone. */
function* groups(
  ops: readonly StoreOperation[],
): Generator<{ alone: StoreOperation } | { together: Groupable[] }> {
  let group: Groupable[] = [];
  const flush = function* () {
    if (group.length === 1) yield { alone: group[0]! };
    else if (group.length > 1) yield { together: group };
    group = [];
  };
  for (const op of ops) {
    if (groupable(op)) group.push(op);
    else {
      yield* flush();
      yield { alone: op };
    }
  }
  yield* flush();
}

function conversationOf(op: StoreOperation): string | undefined {
  return op.kind === 'append' || op.kind === 'reply' ? op.message.conversationId : undefined;
}
