import type Database from 'better-sqlite3';
import { conversationExists, placeOf } from '../src/conversations.js';
import { ColloquyError, StoreError } from '../src/errors.js';
import type {
  AppendOptions,
  AppendResult,
  ConversationStore,
  ConversationSummary,
  ConversationUpdate,
  ForgetOptions,
  GetOptions,
  ListConversationsOptions,
  NewConversation,
  Page,
  SearchOptions,
} from '../src/store.js';
import { withMetadata } from '../src/types.js';
import { isoTimestamp } from '../src/types.js';
import type {
  MessageDeletion,
  MessageEdit,
  NewMessage,
  PlatformMessageRef,
  StoredMessage,
} from '../src/types.js';
import { capByTokens } from '../src/tokenizer.js';
import { Checkpointer } from './checkpointer.js';
import { type SqliteStoreOptions, openDatabase } from './connection.js';
import { buildGetQuery } from './queries.js';
import { fromValues, normalizeTimestamp, toInsert, toMessage } from './rows.js';
import {
  type Candidate,
  candidatesPerWord,
  type QueryWord,
  matchExpression,
  queryWords,
  rankCandidates,
} from './search.js';
import { type Statements, prepareStatements } from './statements.js';
import { FirstInlineWriter } from './first-inline-writer.js';
import { InlineWriter, ThreadWriter, type Writer } from './writer.js';
import type {
  AppendInput,
  AppendOutcome,
  ConversationChange,
  ConversationInsert,
} from './writes.js';

export type { SqliteStoreOptions } from './connection.js';

interface ConversationRow {
  id: string;
  channel_type: string;
  channel_id: string;
  channel_name: string | null;
  thread_id: string | null;
  scope: ConversationSummary['scope'];
  created_at: string;
  last_message_at: string;
  message_count: number;
  number: number;
  title: string | null;
  metadata: string | null;
}

/**
 * The SQLite `ConversationStore`: one file in WAL mode, safe for several processes writing it
 * at once, schema migrated on open. Query the file with plain SQL (see docs/sql.md).
 *
 * Reads run on the store's own connection (`db`). Writes run on a worker thread with a
 * connection of its own (`writerThread`, on by default for files), one after another in call
 * order, so a commit never blocks the event loop and writes that queue up meanwhile commit
 * together; `await` a write before reading what it wrote.
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
  /**
   * The store's reading connection (better-sqlite3), for raw SQL next to the store. Its
   * writes go through SQLite's locking like any other process's.
   */
  readonly db: Database.Database;
  /** Every write, on this connection or the writer thread, runs in call order. */
  readonly writesInOrder = true;
  private readonly sql: Statements;
  private readonly cache = new Map<string, Database.Statement>();
  /** Where writes run: the writer thread for files, this connection for `:memory:`. */
  private readonly writer: Writer;
  private closed = false;
  private readonly checkpointer: Promise<Checkpointer | undefined> | undefined;

  constructor(options: SqliteStoreOptions) {
    this.db = openDatabase(options);
    this.sql = prepareStatements(this.db);
    const inFile = options.path !== ':memory:' && options.path !== '';
    const writable = inFile && options.readonly !== true;
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    this.writer =
      writable && options.writerThread !== false
        ? new FirstInlineWriter(
            new ThreadWriter(options.path, busyTimeoutMs, () => this.inlineWriter()),
            this.db,
            this.sql,
            busyTimeoutMs,
          )
        : this.inlineWriter();
    if (writable && options.backgroundCheckpoints !== false) {
      // Until the worker is up (or if it cannot start) SQLite's own checkpoints carry on.
      this.checkpointer = Checkpointer.start(options.path).then(
        (checkpointer) => {
          if (!this.closed && this.db.open) {
            this.db.pragma('wal_autocheckpoint = 0');
            // The thread's connection (this one's writes are covered by the line above).
            void this.writer.queue('setAutoCheckpoint', 0).catch(() => undefined);
          }
          // Closed directly through `db`: nothing else will end the worker.
          else if (!this.closed) void checkpointer.close();
          return checkpointer; // `close()` awaits its end, even when it started late
        },
        () => undefined,
      );
    }
  }

  /** Where writes run right now: `thread` (the default for files) or `inline`. */
  get writerMode(): 'inline' | 'thread' {
    return this.writer.mode;
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

  /** `background` (capture): on the writer thread, committed with others; see `FirstInlineWriter`. */
  append(input: NewMessage, options: AppendOptions = {}): Promise<AppendResult> {
    const message = withMetadata(input);
    // Not `guard`: capture calls this twice a turn, and guard's closure and extra `.catch`
    // promise cost the event loop 16 -> 25 µs per background append (measured, 10,000 at once).
    const action = 'append a turn';
    let timestamp: string;
    let write: Promise<AppendOutcome>;
    try {
      this.assertOpen(action, message.conversationId);
      const context = { conversationId: message.conversationId, messageId: message.id };
      timestamp = normalizeTimestamp(message.timestamp, 'timestamp', context);
      const input: AppendInput = {
        row: toInsert(message, timestamp),
        kind: message.participant.kind,
        displayName: message.participant.displayName ?? null,
        channelName: message.metadata.channelName ?? null,
        mentions: message.metadata.mentions ?? [],
      };
      write = options.background
        ? this.writer.queue('append', input)
        : this.writer.run('append', input);
    } catch (error) {
      return Promise.reject(storeError(action, message.conversationId, error));
    }
    return write.then(
      (outcome): AppendResult =>
        'seq' in outcome
          ? { message: { ...message, timestamp, sequence: outcome.seq }, inserted: true }
          : { message: read(outcome.existing), inserted: false },
      (error: unknown) => {
        throw storeError(action, message.conversationId, error);
      },
    );
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
      const { sql, params } = buildGetQuery(conversationId, normalized);
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
      const words = queryWords(query);
      const limit = Math.max(0, Math.floor(options.limit ?? 10));
      if (words.length === 0 || limit === 0) return [];
      const ranked = this.rank(conversationId, words).slice(0, limit);
      const rows = this.sql.getBySeqs.all(JSON.stringify(ranked)) as unknown[][];
      const bySeq = new Map(rows.map((values) => [values[0] as number, read(values)]));
      const results = ranked.flatMap((seq) => bySeq.get(seq) ?? []);
      return capByTokens(results, options.tokenCap ?? 2000);
    });
  }

  async deleteMessages(conversationId: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    return this.guard('delete turns', conversationId, () =>
      this.writer.run('deleteMessages', conversationId, ids),
    );
  }

  listConversations(options: ListConversationsOptions = {}): Promise<Page<ConversationSummary>> {
    return this.guard('list conversations', undefined, () => {
      const limit = Math.max(1, Math.floor(options.limit ?? 50));
      const params: Record<string, string | number> = { limit: limit + 1 };
      const where: string[] = [];
      if (options.channelType !== undefined) {
        where.push('c.channel_type = @channelType');
        params.channelType = options.channelType;
      }
      if (options.participantId !== undefined) {
        where.push(
          'c.id IN (SELECT conversation_id FROM messages WHERE participant_id = @participant)',
        );
        params.participant = options.participantId;
      }
      if (options.agentId !== undefined) {
        where.push(`c.id IN (SELECT m.conversation_id FROM messages m
          JOIN participants p ON p.id = m.participant_id
          WHERE m.participant_id = @agent AND p.kind = 'agent')`);
        params.agent = options.agentId;
      }
      params.offset = Math.max(0, Math.floor(options.offset ?? 0));
      if (options.cursor !== undefined) {
        const [last, id] = decodeCursor(options.cursor);
        where.push('(c.last_message_at, c.id) < (@cursorLast, @cursorId)');
        params.cursorLast = last;
        params.cursorId = id;
      }
      const sql = `SELECT * FROM conversations c ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY c.last_message_at DESC, c.id DESC LIMIT @limit OFFSET @offset`;
      const rows = this.statement(sql).all(params) as ConversationRow[];
      const items = rows.slice(0, limit).map(toSummary);
      const last = items[items.length - 1];
      return rows.length > limit && last !== undefined
        ? { items, nextCursor: encodeCursor(last.lastMessageAt, last.id) }
        : { items };
    });
  }

  getConversation(conversationId: string): Promise<ConversationSummary | undefined> {
    return this.guard('read a conversation', conversationId, () => {
      const row = this.sql.getConversation.get(conversationId) as ConversationRow | undefined;
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
      if (!(await this.writer.run('createConversation', row))) {
        throw conversationExists(input.id);
      }
      return toSummary(this.sql.getConversation.get(input.id) as ConversationRow);
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
      if (!(await this.writer.run('updateConversation', change))) return undefined;
      return toSummary(this.sql.getConversation.get(conversationId) as ConversationRow);
    });
  }

  deleteConversation(conversationId: string): Promise<boolean> {
    return this.guard('delete a conversation', conversationId, () =>
      this.writer.run('deleteConversation', conversationId),
    );
  }

  async forgetParticipant(participantId: string, options: ForgetOptions = {}): Promise<number> {
    const mode = options.mode === 'redact' ? 'redact' : 'delete';
    return this.guard('forget a participant', undefined, () =>
      this.writer.run('forgetParticipant', participantId, mode),
    );
  }

  recordEdit(edit: MessageEdit): Promise<boolean> {
    return this.guard('record an edit', undefined, () => {
      const editedAt = normalizeTimestamp(edit.editedAt, 'editedAt');
      return this.writer.run('recordEdit', platformRef(edit), edit.content, editedAt);
    });
  }

  recordDeletion(deletion: MessageDeletion): Promise<boolean> {
    return this.guard('record a deletion', undefined, () => {
      const deletedAt = normalizeTimestamp(deletion.deletedAt, 'deletedAt');
      return this.writer.run('recordDeletion', platformRef(deletion), deletedAt);
    });
  }

  getSummary(conversationId: string, agentId: string): Promise<StoredMessage | undefined> {
    return this.guard('read a summary', conversationId, () => {
      const row = this.sql.getSummary.get(conversationId, agentId) as unknown[] | undefined;
      return row === undefined ? undefined : read(row);
    });
  }

  has(message: NewMessage): Promise<boolean> {
    return this.guard('look a turn up', message.conversationId, () => {
      const { id, metadata } = withMetadata(message);
      const { channelType, channelId, messageId = null } = metadata;
      return this.sql.findDuplicateSeq.get(id, channelType, channelId, messageId) !== undefined;
    });
  }

  getMessage(conversationId: string, id: string): Promise<StoredMessage | undefined> {
    return this.guard('read a turn', conversationId, () => {
      const row = this.sql.getById.get(id) as unknown[] | undefined;
      const message = row === undefined ? undefined : read(row);
      return message?.conversationId === conversationId ? message : undefined;
    });
  }

  /**
   * Copies the WAL back into the database file now (on the checkpoint worker when there is
   * one). Stores do this by themselves every second; call it before copying the file.
   *
   * @example
   * ```ts
   * await store.checkpoint();
   * ```
   */
  async checkpoint(): Promise<void> {
    const checkpointer = await this.checkpointer;
    if (checkpointer !== undefined) return checkpointer.checkpoint();
    await this.guard('checkpoint', undefined, () => this.db.pragma('wal_checkpoint(PASSIVE)'));
  }

  /** The `background` appends held back go to the writer thread now (see `AppendOptions`). */
  flush(): void {
    this.writer.flush();
  }

  /** Closes the connection; later calls fail with a StoreError. Closing twice is fine. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cache.clear();
    await this.writer.close();
    await (await this.checkpointer)?.close();
    this.db.close();
  }

  /**
   * Search, step one: per word, the conversation's newest matches straight from FTS (the
   * conversation's rowid range), then BM25 over those candidates.
   */
  private rank(conversationId: string, words: QueryWord[]): number[] {
    const conversation = this.sql.getConversation.get(conversationId) as
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

  /** Writes on this connection, with the statements the store prepared already. */
  private inlineWriter(): InlineWriter {
    return new InlineWriter(this.db, this.sql);
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
   * never throws, it rejects. Not an async function: most calls are synchronous reads, and
   * each async layer costs the event loop a few microseconds.
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
    if (this.closed) {
      throw new StoreError(`cannot ${action}: the store is closed`, {
        conversationId,
        transient: true,
      });
    }
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
  if (/^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|NOMEM|INTERRUPT|PROTOCOL)/.test(code)) return true;
  if (/^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/.test(code)) return false;
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

function toSummary(row: ConversationRow): ConversationSummary {
  return {
    id: row.id,
    channelType: row.channel_type,
    channelId: row.channel_id,
    ...(row.channel_name === null ? {} : { channelName: row.channel_name }),
    ...(row.thread_id === null ? {} : { threadId: row.thread_id }),
    scope: row.scope,
    messageCount: row.message_count,
    firstMessageAt: row.created_at,
    lastMessageAt: row.last_message_at,
    ...(row.title === null ? {} : { title: row.title }),
    ...(row.metadata === null
      ? {}
      : { metadata: JSON.parse(row.metadata) as Record<string, unknown> }),
  };
}

function encodeCursor(lastMessageAt: string, id: string): string {
  return Buffer.from(JSON.stringify([lastMessageAt, id]), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === 'string')) {
      return [value[0] as string, value[1] as string];
    }
  } catch {
    // fall through to the error below
  }
  throw new StoreError(`not a listConversations cursor: ${JSON.stringify(cursor)}`);
}
