import type { MessageReaction, ReactionChange } from '../../src/reactions.js';
import { SqliteReactions } from './reactions.js';
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { conversationExists, placeOf } from '../../src/conversations.js';
import { ColloquyError, StoreError } from '../../src/errors.js';
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
import { refusedUse, usesOf } from '../../src/uses.js';
import type {
  MessageDeletion,
  MessageEdit,
  NewMessage,
  PlatformMessageRef,
  StoredMessage,
} from '../../src/types.js';
import { type SqliteStoreOptions, openDatabase } from './connection.js';
import { buildGetQuery } from '../queries.js';
import { fromValues, normalizeTimestamp, toInsert, toMessage } from '../rows.js';
import {
  capResults,
  type Candidate,
  candidatesPerWord,
  type QueryWord,
  matchExpression,
  rankCandidates,
  searchRequest,
} from '../search.js';
import { AUTHORED, SQLITE_DIALECT, type Statements, prepareStatements } from './statements.js';
import {
  type AppendInput,
  type AppendOutcome,
  type ConversationChange,
  type ConversationInsert,
  StoreWrites,
} from './writes.js';
import { RunStatements } from './runs.js';
import { LeaseStatements } from './leases.js';
import { PostStatements } from './posts.js';
import { claimTerms, type NewPost, type PostStatus, type ScheduledPost } from '../../src/posts.js';
import { type ClaimedRuns, type Lease, checkLeaseName, checkLeaseTtl } from '../../src/leases.js';
import { Writer } from './commit-thread.js';
import { type ConversationRow, listingQuery, pageOf, toSummary } from '../listing.js';
import type { AgentRun, RunQuery } from '../../src/runs.js';

export type { SqliteStoreOptions } from './connection.js';

/**
 * The SQLite `ConversationStore`: one file in WAL mode, safe for several processes writing it
 * at once, schema migrated on open. Query the file with plain SQL (see docs/sql.md). Reads and
 * single calls run on the store's connection (`db`); `commit` writes a batch of operations in one
 * transaction, on that connection too or, with `writerThread`, on a second connection in a
 * thread of its own (the connection the store falls back to if that thread dies).
 *
 * @example
 * ```ts
 * import { SqliteConversationStore } from 'colloquy/sqlite';
 * const store = new SqliteConversationStore({ path: './colloquy.db' });
 * await store.append(turn);
 * const recent = await store.get(turn.conversationId, { limit: 20 });
 * await store.close();
 * ```
 */
export class SqliteConversationStore implements ConversationStore {
  /** The store's connection (better-sqlite3), for raw SQL next to the store. */
  readonly db: Database.Database;
  /** The file (or `:memory:`). */
  readonly path: string;
  private readonly sql: Statements;
  private readonly writes: StoreWrites;
  private readonly reactions: SqliteReactions;
  private readonly runs: RunStatements;
  private readonly leases: LeaseStatements;
  private readonly posts: PostStatements;
  private readonly cache = new Map<string, Database.Statement>();
  private closed = false;
  /** Commits on a thread of its own (`writerThread`), while it runs. */
  private readonly writer: Writer | undefined;
  /** The file as opened (a descriptor and its identity), to notice it replaced or damaged. */
  private readonly file:
    | {
        fd: number;
        dev: number;
        ino: number;
        /** The header was on disk at open. */ header: boolean;
      }
    | undefined;

  constructor(options: SqliteStoreOptions) {
    this.db = openDatabase(options);
    this.path = options.path;
    this.sql = prepareStatements(this.db);
    this.writes = new StoreWrites(this.db, this.sql);
    this.reactions = new SqliteReactions(this.db);
    this.runs = new RunStatements(this.db);
    this.leases = new LeaseStatements(this.db);
    this.posts = new PostStatements(this.db);
    if (options.path !== ':memory:' && options.path !== '' && options.readonly !== true) {
      // A new file's first pages are in the WAL: copy them back, so the header is on disk.
      this.db.pragma('wal_checkpoint(PASSIVE)');
      const fd = openSync(options.path, 'r');
      const { dev, ino } = fstatSync(fd);
      this.file = { fd, dev, ino, header: headerOf(fd) === 'sound' };
      if (options.writerThread === true) {
        this.writer = new Writer({
          path: options.path,
          busyTimeoutMs: options.busyTimeoutMs,
          durability: options.durability,
        });
      }
    }
  }

  /**
   * Resolves once the store takes commits: at once, or with `writerThread` once its thread has
   * opened the file (a bot waits for it before its channels connect, so the first events are
   * committed as soon as they arrive).
   */
  async ready(): Promise<void> {
    await this.writer?.ready;
  }

  /**
   * Opens a store on a path (or `:memory:`).
   *
   * @example
   * ```ts
   * const store = SqliteConversationStore.open('./colloquy.db');
   * ```
   */
  static open(path: string | SqliteStoreOptions): SqliteConversationStore {
    return new SqliteConversationStore(typeof path === 'string' ? { path } : path);
  }

  append(message: NewMessage): Promise<AppendResult> {
    return this.guard('append a turn', message.conversationId, () => {
      this.assertIntact();
      return this.appendNow(message);
    });
  }

  /**
   * Commits `ops` in one transaction, each in a savepoint of its own (see `StoreWrites.batch`),
   * and answers one result per op. Never rejects.
   *
   * @example
   * ```ts
   * const [result] = await store.commit([{ kind: 'append', message: turn }]);
   * ```
   */
  commit(ops: readonly StoreOperation[]): Promise<CommitResult[]> {
    if (this.writer?.alive === true && !this.closed) return this.writer.commit(ops);
    const calls = ops.map((op) => () => this.apply(op));
    let answers: ReturnType<StoreWrites['batch']>;
    try {
      if (this.closed) throw this.closedError('commit');
      this.assertIntact();
      answers = this.writes.batch(calls);
    } catch (error) {
      answers = ops.map(() => ({ error }));
    }
    return Promise.resolve(
      answers.map((answer, i): CommitResult => {
        if ('value' in answer) return { ok: true, value: answer.value } as CommitResult;
        const op = ops[i]!;
        const conversationId = op.kind === 'append' ? op.message.conversationId : undefined;
        return { ok: false, error: storeError(`store ${op.kind}`, conversationId, answer.error) };
      }),
    );
  }

  private apply(op: StoreOperation): unknown {
    switch (op.kind) {
      case 'append':
        return this.appendNow(op.message);
      case 'edit':
        return this.editNow(op.edit);
      case 'delete':
        return this.deleteNow(op.deletion);
      case 'reaction':
        return this.reactions.record({ ...op.change, at: normalizeTimestamp(op.change.at, 'at') });
      case 'run':
        return this.runs.upsert(op.run, op.create === true);
      case 'reply':
        return this.appendNow(op.message, 'sending');
      case 'confirm': {
        const { id, conversationId, delivery, messageIds } = op.confirmation;
        // Refused, nothing went out: no turn was said, so no row is kept.
        if (delivery === 'failed' && messageIds.length === 0)
          return this.writes.deleteMessages(conversationId, [id]) > 0;
        return this.runs.confirm(op.confirmation);
      }
      case 'state':
        return this.runs.setState(op.key, op.value);
    }
  }

  /** Agent runs by turn or by status, oldest first, with how far each one's reply went. */
  getRuns(query: RunQuery): Promise<AgentRun[]> {
    return this.guard('read agent runs', undefined, () => this.runs.find(query));
  }

  /** Takes `name` when free or expired, or extends it for its holder (see `ConversationStore`). */
  async acquireLease(name: string, holder: string, ttlMs: number): Promise<Lease | undefined> {
    checkLeaseName(name, holder);
    checkLeaseTtl(ttlMs);
    return this.guard('take a lease', undefined, () => this.leases.acquire(name, holder, ttlMs));
  }

  async renewLease(lease: Lease, ttlMs: number): Promise<Lease | undefined> {
    checkLeaseTtl(ttlMs);
    return this.guard('renew a lease', undefined, () => this.leases.renew(lease, ttlMs));
  }

  async releaseLease(lease: Lease): Promise<void> {
    return this.guard('release a lease', undefined, () => this.leases.release(lease));
  }

  async claimUnfinishedRuns(holder: string, ttlMs: number): Promise<ClaimedRuns[]> {
    checkLeaseName('claimUnfinishedRuns', holder);
    checkLeaseTtl(ttlMs);
    return this.guard('claim unfinished runs', undefined, () => {
      const claimed = this.leases.claim(holder, ttlMs);
      if (claimed.length === 0) return [];
      const runs = this.runs.find({ statuses: ['pending', 'running'] });
      return claimed.map(({ lease, conversationId }) => ({
        lease,
        runs: runs.filter((run) => run.conversationId === conversationId),
      }));
    });
  }

  /** Stores a post the bot starts (see `PostQueue`). */
  async schedulePost(post: NewPost, claim?: { holder: string; ttlMs: number }): Promise<void> {
    if (claim !== undefined) checkLeaseTtl(claim.ttlMs);
    return this.guard('store a post', post.conversationId, () => this.posts.schedule(post, claim));
  }

  async claimDuePosts(
    holder: string,
    ttlMs: number,
    options: { limit?: number; takeOver?: boolean } = {},
  ): Promise<ScheduledPost[]> {
    const { limit, takeOver } = claimTerms(holder, ttlMs, options);
    return this.guard('claim due posts', undefined, () =>
      this.posts.claim(holder, ttlMs, limit, takeOver),
    );
  }

  async renewPostClaims(holder: string, ttlMs: number): Promise<number> {
    checkLeaseTtl(ttlMs);
    return this.guard('renew post claims', undefined, () => this.posts.renew(holder, ttlMs));
  }

  async finishPost(id: string, status: Exclude<PostStatus, 'pending'>, error?: string) {
    return this.guard('end a post', undefined, () => this.posts.finish(id, status, error));
  }

  async getPosts(query: { statuses?: readonly PostStatus[] } = {}): Promise<ScheduledPost[]> {
    return this.guard('read posts', undefined, () => this.posts.all(query.statuses));
  }

  /** A value kept with a `state` operation. */
  getState(key: string): Promise<string | undefined> {
    return this.guard('read state', undefined, () => this.runs.getState(key));
  }

  private appendNow(given: NewMessage, delivery: 'sending' | null = null): AppendResult {
    const message = withMetadata(given);
    const context = { conversationId: message.conversationId, messageId: message.id };
    const timestamp = normalizeTimestamp(message.timestamp, 'timestamp', context);
    const uses = usesOf(message);
    const input: AppendInput = {
      row: toInsert(message, timestamp, delivery),
      kind: message.participant.kind,
      displayName: message.participant.displayName ?? null,
      channelName: message.metadata.channelName ?? null,
      mentions: message.metadata.mentions ?? [],
      ...(uses !== undefined && {
        uses: { messageId: uses, refused: toInsert(refusedUse(message), timestamp, delivery) },
      }),
    };
    const outcome: AppendOutcome = this.writes.append(input);
    if (!('seq' in outcome)) return { message: read(outcome.existing), inserted: false };
    const stored = outcome.refused === true ? refusedUse(message) : message;
    return { message: { ...stored, timestamp, sequence: outcome.seq }, inserted: true };
  }

  private editNow(edit: MessageEdit): boolean {
    const editedAt = normalizeTimestamp(edit.editedAt, 'editedAt');
    return this.writes.recordEdit(platformRef(edit), edit.content, editedAt);
  }

  private deleteNow(deletion: MessageDeletion): boolean {
    const deletedAt = normalizeTimestamp(deletion.deletedAt, 'deletedAt');
    return this.writes.recordDeletion(platformRef(deletion), deletedAt);
  }

  get(conversationId: string, options: GetOptions = {}): Promise<StoredMessage[]> {
    return this.guard('read turns', conversationId, () => {
      const normalized: GetOptions = { ...options };
      if (options.sinceTimestamp !== undefined) {
        normalized.sinceTimestamp = normalizeTimestamp(options.sinceTimestamp, 'sinceTimestamp');
      }
      if (options.before !== undefined) {
        normalized.before = normalizeTimestamp(options.before, 'before');
      }
      if (
        normalized.concerning !== undefined &&
        this.sql.conversationScope.get(conversationId) === 'dm'
      ) {
        // Every turn of a DM concerns the agent.
        delete normalized.concerning;
      }
      const { sql, params } = buildGetQuery(conversationId, normalized, SQLITE_DIALECT);
      const rows = this.statement(sql).raw().all(params) as unknown[][];
      return rows.reverse().map(read);
    });
  }

  search(
    conversationId: string,
    query: string,
    options: SearchOptions = {},
  ): Promise<StoredMessage[]> {
    return this.guard('search', conversationId, () => {
      const request = searchRequest(query, options);
      if (request === undefined) return [];
      const ranked = this.rank(conversationId, request.words).slice(0, request.limit);
      const rows = this.sql.getBySeqs.all(JSON.stringify(ranked)) as unknown[][];
      const bySeq = new Map(rows.map((values) => [values[0] as number, read(values)]));
      const results = ranked.flatMap((seq) => bySeq.get(seq) ?? []);
      return capResults(results, options.tokenCap);
    });
  }

  async deleteMessages(conversationId: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    return this.guard('delete turns', conversationId, () =>
      this.writes.deleteMessages(conversationId, ids),
    );
  }

  listConversations(options: ListConversationsOptions = {}): Promise<Page<ConversationSummary>> {
    return this.guard('list conversations', undefined, () => {
      const { sql, params, limit } = listingQuery(
        options,
        '(c.last_message_at, c.id) < (@cursorLast, @cursorId)',
        AUTHORED,
      );
      return pageOf(this.statement(sql).all(params) as ConversationRow[], limit);
    });
  }

  getConversation(conversationId: string): Promise<ConversationSummary | undefined> {
    return this.guard('read a conversation', conversationId, () => {
      const row = this.sql.getConversation.get({ id: conversationId }) as
        ConversationRow | undefined;
      return row === undefined ? undefined : toSummary(row);
    });
  }

  createConversation(input: NewConversation): Promise<ConversationSummary> {
    return this.guard('create a conversation', input.id, async () => {
      const place = placeOf(input);
      const row: ConversationInsert = {
        id: input.id,
        channelType: place.channelType,
        channelId: place.channelId,
        channelName: place.channelName ?? null,
        threadId: place.threadId ?? null,
        scope: place.scope,
        now: isoTimestamp(),
        title: input.title ?? null,
        metadata: input.metadata === undefined ? null : JSON.stringify(input.metadata),
      };
      if (!this.writes.createConversation(row)) {
        throw conversationExists(input.id);
      }
      return toSummary(this.sql.getConversation.get({ id: input.id }) as ConversationRow);
    });
  }

  updateConversation(
    conversationId: string,
    update: ConversationUpdate,
  ): Promise<ConversationSummary | undefined> {
    return this.guard('update a conversation', conversationId, async () => {
      const how = (value: unknown) =>
        value === undefined ? 'keep' : value === null ? 'clear' : 'set';
      const change: ConversationChange = {
        id: conversationId,
        titleHow: how(update.title),
        title: update.title ?? null,
        metadataHow: how(update.metadata),
        metadata: update.metadata == null ? null : JSON.stringify(update.metadata),
      };
      if (!this.writes.updateConversation(change)) return undefined;
      return toSummary(this.sql.getConversation.get({ id: conversationId }) as ConversationRow);
    });
  }

  deleteConversation(conversationId: string): Promise<boolean> {
    return this.guard('delete a conversation', conversationId, () =>
      this.writes.deleteConversation(conversationId),
    );
  }

  async forgetParticipant(participantId: string, options: ForgetOptions = {}): Promise<number> {
    const mode = options.mode === 'redact' ? 'redact' : 'delete';
    return this.guard('forget a participant', undefined, () =>
      this.writes.forgetParticipant(participantId, mode),
    );
  }

  recordEdit(edit: MessageEdit): Promise<boolean> {
    return this.guard('record an edit', undefined, () => {
      this.assertIntact();
      return this.editNow(edit);
    });
  }

  recordDeletion(deletion: MessageDeletion): Promise<boolean> {
    return this.guard('record a deletion', undefined, () => {
      this.assertIntact();
      return this.deleteNow(deletion);
    });
  }

  recordReaction(change: ReactionChange): Promise<boolean> {
    return this.guard('record a reaction', undefined, () => {
      this.assertIntact();
      return this.reactions.record({ ...change, at: normalizeTimestamp(change.at, 'at') });
    });
  }

  getReactions(conversationId: string, messageId: string): Promise<MessageReaction[]> {
    return this.guard('read reactions', conversationId, () =>
      this.reactions.list(conversationId, messageId),
    );
  }

  getSummary(conversationId: string, agentId: string): Promise<StoredMessage | undefined> {
    return this.guard('read a summary', conversationId, () => {
      const row = this.sql.getSummary.get(conversationId, agentId) as unknown[] | undefined;
      return row === undefined ? undefined : read(row);
    });
  }

  getMessage(conversationId: string, id: string): Promise<StoredMessage | undefined> {
    return this.guard('read a turn', conversationId, () => {
      const row = this.sql.getById.get(id) as unknown[] | undefined;
      const message = row === undefined ? undefined : read(row);
      return message?.conversationId === conversationId ? message : undefined;
    });
  }

  findByPlatformRef(ref: PlatformMessageRef): Promise<StoredMessage | undefined> {
    return this.guard('find a turn', undefined, () => {
      const { channelType, channelId, messageId } = ref;
      const row =
        this.sql.getByPlatform.get(channelType, channelId, messageId) ??
        this.sql.getByChannelPart.get(channelType, channelId, messageId);
      return row === undefined ? undefined : read(row as unknown[]);
    });
  }

  findMessage(conversationId: string, ref: PlatformMessageRef): Promise<StoredMessage | undefined> {
    return this.guard('find a turn', conversationId, () => {
      const { channelType, channelId, messageId } = ref;
      const row = (this.sql.getByPlatform.get(channelType, channelId, messageId) ??
        this.sql.getByPart.get(conversationId, messageId)) as unknown[] | undefined;
      const message = row === undefined ? undefined : read(row);
      return message?.conversationId === conversationId ? message : undefined;
    });
  }

  /**
   * Copies the WAL back into the database file now (SQLite also does so by itself every
   * 1000 pages). Call it before copying the file.
   *
   * @example
   * ```ts
   * await store.checkpoint();
   * ```
   */
  async checkpoint(): Promise<void> {
    await this.guard('checkpoint', undefined, () => this.db.pragma('wal_checkpoint(PASSIVE)'));
  }

  /** Closes the connection; later calls fail with a StoreError. Closing twice is fine. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writer?.close();
    this.cache.clear();
    this.db.close();
    if (this.file !== undefined) closeSync(this.file.fd);
  }

  /**
   * Throws (for good) when the file was replaced, truncated or overwritten while the store had
   * it open: SQLite, writing to its WAL from pages it holds, would not notice, and the turns
   * written from then on would be lost at the next checkpoint.
   */
  private assertIntact(): void {
    if (this.file === undefined) return;
    let problem: string | undefined;
    try {
      const now = statSync(this.path);
      if (now.dev !== this.file.dev || now.ino !== this.file.ino) problem = 'was replaced';
      else if (this.file.header && headerOf(this.file.fd) !== 'sound') {
        problem = 'is no longer a SQLite database (overwritten or truncated)';
      }
    } catch (error) {
      problem = `cannot be read (${error instanceof Error ? error.message : String(error)})`;
    }
    if (problem !== undefined) {
      throw new StoreError(
        `the database file ${this.path} ${problem} while the store had it open; nothing more ` +
          `is written to it (restart on a sound file, then \`colloquy import\` the dead letters)`,
        { transient: false },
      );
    }
  }

  /**
   * Search, step one: per word, the conversation's newest matches straight from FTS (the
   * conversation's rowid range), then BM25 over those candidates.
   */
  private rank(conversationId: string, words: QueryWord[]): number[] {
    const conversation = this.sql.getConversation.get({ id: conversationId }) as
      ConversationRow | undefined;
    if (conversation === undefined) return [];
    const total = conversation.message_count;
    const found = new Map<string, number>();
    const seqs = new Set<number>();
    const limit = candidatesPerWord(words.length);
    for (const { word, key } of words) {
      const match = matchExpression(word);
      const hits = this.sql.searchWord.all({
        match,
        number: conversation.number,
        limit,
      }) as number[];
      found.set(key, hits.length < limit ? hits.length : total);
      for (const seq of hits) seqs.add(seq);
    }
    if (seqs.size === 0) return [];
    const candidates = this.sql.searchCandidates.all({
      seqs: JSON.stringify([...seqs]),
      conversation: conversationId,
    }) as Candidate[];
    return rankCandidates(
      candidates,
      words.map((w) => w.key),
      total,
      found,
    );
  }

  private statement(sql: string): Database.Statement {
    let statement = this.cache.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.cache.set(sql, statement);
    }
    return statement;
  }

  /**
   * Runs one store call, turning SQLite failures into a StoreError with context and cause;
   * never throws, it rejects. Not an async function: most calls are synchronous reads, which
   * need no extra async layer.
   */
  private guard<T>(
    action: string,
    conversationId: string | undefined,
    fn: () => T | Promise<T>,
  ): Promise<T> {
    const failed = (error: unknown) => Promise.reject(storeError(action, conversationId, error));
    try {
      this.assertOpen(action, conversationId);
      const value = fn();
      return value instanceof Promise ? value.catch(failed) : Promise.resolve(value);
    } catch (error) {
      return failed(error);
    }
  }

  private assertOpen(action: string, conversationId: string | undefined): void {
    if (this.closed) throw this.closedError(action, conversationId);
  }

  private closedError(action: string, conversationId?: string): StoreError {
    return new StoreError(`cannot ${action}: the store is closed`, {
      conversationId,
      transient: true,
    });
  }
}

/** A failure of one store call as a StoreError with context and cause (a ColloquyError as is). */
function storeError(action: string, conversationId: string | undefined, error: unknown) {
  if (error instanceof ColloquyError) return error;
  return new StoreError(`cannot ${action}: ${explain(error)}`, {
    conversationId,
    cause: error,
    transient: isTransient(error),
  });
}

/** The first 16 bytes of every SQLite database file. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

function headerOf(fd: number): 'sound' | 'damaged' {
  const header = Buffer.alloc(16);
  return readSync(fd, header, 0, 16, 0) === 16 && header.equals(SQLITE_HEADER)
    ? 'sound'
    : 'damaged';
}

/** Exactly the three keys that name a platform message (the statement binds no others). */
function platformRef({
  channelType,
  channelId,
  messageId,
}: PlatformMessageRef): PlatformMessageRef {
  return { channelType, channelId, messageId };
}

/** A turn from a raw-mode row. */
function read(values: unknown[]): StoredMessage {
  return toMessage(fromValues(values));
}

/**
 * Whether a failure can pass: busy, locked, full, I/O or cannot-open can; a constraint, a
 * type mismatch or a value SQLite cannot bind (`TypeError`, `RangeError`: a BigInt in
 * metadata) never will. Undefined for other SQLite codes.
 */
function isTransient(error: unknown): boolean | undefined {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') {
    return error instanceof TypeError || error instanceof RangeError ? false : undefined;
  }
  if (/^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|NOMEM|INTERRUPT|PROTOCOL|READONLY)/.test(code)) {
    return true;
  }
  // A corrupt or replaced file will not heal by waiting: the op is kept in the dead letters.
  if (/^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE|CORRUPT|NOTADB)/.test(code)) return false;
  return undefined;
}

/** A short reason for a SQLite failure, by its result code. */
function explain(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code !== 'string') return message;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return `the database is locked by another writer (${code}: ${message})`;
  }
  if (code === 'SQLITE_FULL') return `the disk is full (${code}: ${message})`;
  if (code.startsWith('SQLITE_READONLY')) return `the database is read-only (${code}: ${message})`;
  return `${code}: ${message}`;
}
