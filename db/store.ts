import type Database from 'better-sqlite3';
import { ColloquyError, StoreError } from '../src/errors.js';
import type {
  AppendResult,
  ConversationStore,
  ConversationSummary,
  ForgetOptions,
  GetOptions,
  ListConversationsOptions,
  Page,
  SearchOptions,
} from '../src/store.js';
import type { MessageDeletion, MessageEdit, NewMessage, StoredMessage } from '../src/types.js';
import { capByTokens } from '../src/tokenizer.js';
import { Checkpointer } from './checkpointer.js';
import { type SqliteStoreOptions, openDatabase } from './connection.js';
import { buildGetQuery } from './queries.js';
import { type MessageInsert, fromValues, normalizeTimestamp, toInsert, toMessage } from './rows.js';
import {
  type Candidate,
  candidatesPerWord,
  type QueryWord,
  matchExpression,
  queryWords,
  rankCandidates,
} from './search.js';
import { type Statements, prepareStatements } from './statements.js';

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
}

/**
 * The SQLite `ConversationStore`: one file in WAL mode, safe for several processes writing it
 * at once, schema migrated on open. Query the file with plain SQL (see docs/sql.md).
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
  /** The better-sqlite3 connection, for raw SQL next to the store. */
  readonly db: Database.Database;
  private readonly sql: Statements;
  private readonly cache = new Map<string, Database.Statement>();
  /** The write of `append`, wrapped once (making a better-sqlite3 transaction costs ~10 µs). */
  private readonly insertTurn: Database.Transaction<
    (message: NewMessage, row: MessageInsert) => AppendResult
  >;
  private closed = false;
  private readonly checkpointer: Promise<Checkpointer | undefined> | undefined;

  constructor(options: SqliteStoreOptions) {
    this.db = openDatabase(options);
    this.sql = prepareStatements(this.db);
    const inFile = options.path !== ':memory:' && options.path !== '';
    if (inFile && options.readonly !== true && options.backgroundCheckpoints !== false) {
      // Until the worker is up (or if it cannot start) SQLite's own checkpoints carry on.
      this.checkpointer = Checkpointer.start(options.path).then(
        (checkpointer) => {
          if (!this.closed && this.db.open) this.db.pragma('wal_autocheckpoint = 0');
          // Closed directly through `db`: nothing else will end the worker.
          else if (!this.closed) void checkpointer.close();
          return checkpointer; // `close()` awaits its end, even when it started late
        },
        () => undefined,
      );
    }
    this.insertTurn = this.db.transaction((message: NewMessage, row: MessageInsert) => {
      const existing = this.findDuplicate(
        row.id,
        row.channelType,
        row.channelId,
        row.platformMessageId,
      );
      if (existing !== undefined) return { message: existing, inserted: false };
      const timestamp = row.timestamp;
      this.sql.upsertParticipant.run({
        id: row.participantId,
        kind: message.participant.kind,
        name: message.participant.displayName ?? null,
        ts: timestamp,
      });
      this.sql.upsertConversation.run({
        ...row,
        channelName: message.metadata.channelName ?? null,
      });
      const seq = Number(this.sql.insertMessage.run(row).lastInsertRowid);
      for (const participantId of message.metadata.mentions) {
        this.sql.insertMention.run(seq, row.conversationId, participantId, timestamp);
      }
      return { message: { ...message, timestamp, sequence: seq }, inserted: true };
    });
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

  async append(message: NewMessage): Promise<AppendResult> {
    return this.guard('append a turn', message.conversationId, () => {
      const context = { conversationId: message.conversationId, messageId: message.id };
      const timestamp = normalizeTimestamp(message.timestamp, 'timestamp', context);
      return this.insertTurn.immediate(message, toInsert(message, timestamp));
    });
  }

  async get(conversationId: string, options: GetOptions = {}): Promise<StoredMessage[]> {
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

  async search(
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
      this.db
        .transaction(() => {
          const { changes } = this.sql.deleteMessages.run(conversationId, JSON.stringify(ids));
          if (changes > 0) this.sql.refreshConversation.run({ id: conversationId });
          return changes;
        })
        .immediate(),
    );
  }

  async listConversations(
    options: ListConversationsOptions = {},
  ): Promise<Page<ConversationSummary>> {
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
      if (options.cursor !== undefined) {
        const [last, id] = decodeCursor(options.cursor);
        where.push('(c.last_message_at, c.id) < (@cursorLast, @cursorId)');
        params.cursorLast = last;
        params.cursorId = id;
      }
      const sql = `SELECT * FROM conversations c ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY c.last_message_at DESC, c.id DESC LIMIT @limit`;
      const rows = this.statement(sql).all(params) as ConversationRow[];
      const items = rows.slice(0, limit).map(toSummary);
      const last = items[items.length - 1];
      return rows.length > limit && last !== undefined
        ? { items, nextCursor: encodeCursor(last.lastMessageAt, last.id) }
        : { items };
    });
  }

  async getConversation(conversationId: string): Promise<ConversationSummary | undefined> {
    return this.guard('read a conversation', conversationId, () => {
      const row = this.sql.getConversation.get(conversationId) as ConversationRow | undefined;
      return row === undefined ? undefined : toSummary(row);
    });
  }

  async deleteConversation(conversationId: string): Promise<boolean> {
    return this.guard('delete a conversation', conversationId, () =>
      this.db
        .transaction(() => {
          const s = this.sql;
          const authors = s.authorsIn.all(conversationId) as string[];
          if (s.deleteConversation.run(conversationId).changes === 0) return false;
          s.deleteSilentParticipants.run(JSON.stringify(authors));
          s.optimizeSearch.run();
          return true;
        })
        .immediate(),
    );
  }

  async forgetParticipant(participantId: string, options: ForgetOptions = {}): Promise<number> {
    return this.guard('forget a participant', undefined, () =>
      this.db
        .transaction(() => {
          const s = this.sql;
          if (options.mode === 'redact') {
            s.redactRevisions.run(participantId);
            const { changes } = s.redactMessages.run(participantId);
            s.redactParticipant.run(participantId);
            if (changes > 0) s.optimizeSearch.run();
            return changes;
          }
          const touched = s.conversationsOf.all(participantId) as string[];
          const { changes } = s.deleteMessagesOf.run(participantId);
          s.deleteMentionsOf.run(participantId);
          s.clearRepliesTo.run(participantId);
          s.deleteParticipant.run(participantId);
          for (const id of touched) {
            s.refreshConversation.run({ id });
            s.deleteEmptyConversation.run(id);
          }
          if (changes > 0) s.optimizeSearch.run();
          return changes;
        })
        .immediate(),
    );
  }

  async recordEdit(edit: MessageEdit): Promise<boolean> {
    return this.guard('record an edit', undefined, () => {
      const editedAt = normalizeTimestamp(edit.editedAt, 'editedAt');
      return this.db
        .transaction(() => {
          const found = this.sql.findByPlatform.get(
            edit.channelType,
            edit.channelId,
            edit.messageId,
          ) as { seq: number; content: string } | undefined;
          if (found === undefined) return false;
          this.sql.insertRevision.run(found.seq, found.content, editedAt);
          this.sql.applyEdit.run(edit.content, editedAt, found.seq);
          return true;
        })
        .immediate();
    });
  }

  async recordDeletion(deletion: MessageDeletion): Promise<boolean> {
    return this.guard('record a deletion', undefined, () => {
      const deletedAt = normalizeTimestamp(deletion.deletedAt, 'deletedAt');
      const { channelType, channelId, messageId } = deletion;
      return this.db
        .transaction(
          () =>
            this.sql.markDeleted.run({ deletedAt, channelType, channelId, messageId }).changes > 0,
        )
        .immediate();
    });
  }

  async getSummary(conversationId: string, agentId: string): Promise<StoredMessage | undefined> {
    return this.guard('read a summary', conversationId, () => {
      const row = this.sql.getSummary.get(conversationId, agentId) as unknown[] | undefined;
      return row === undefined ? undefined : read(row);
    });
  }

  async getMessage(conversationId: string, id: string): Promise<StoredMessage | undefined> {
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

  /** Closes the connection; later calls fail with a StoreError. Closing twice is fine. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cache.clear();
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

  private findDuplicate(
    id: string,
    channelType: string,
    channelId: string,
    platformMessageId: string | null,
  ): StoredMessage | undefined {
    // The common case is a new turn: look for it through the unique indexes only, and read
    // the whole row just for a duplicate.
    const seq = this.sql.findDuplicateSeq.get(id, channelType, channelId, platformMessageId);
    if (seq === undefined) return undefined;
    return read(this.sql.getBySeq.get(seq) as unknown[]);
  }

  private statement(sql: string): Database.Statement {
    let statement = this.cache.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.cache.set(sql, statement);
    }
    return statement;
  }

  /** Runs one store call, turning SQLite failures into a StoreError with context and cause. */
  private async guard<T>(
    action: string,
    conversationId: string | undefined,
    fn: () => T,
  ): Promise<T> {
    if (this.closed) {
      throw new StoreError(`cannot ${action}: the store is closed`, {
        conversationId,
        transient: true,
      });
    }
    try {
      return fn();
    } catch (error) {
      if (error instanceof ColloquyError) throw error;
      throw new StoreError(`cannot ${action}: ${explain(error)}`, {
        conversationId,
        cause: error,
        transient: isTransient(error),
      });
    }
  }
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
