import type Database from 'better-sqlite3';
import type { ParticipantKind, PlatformMessageRef } from '../src/types.js';
import type { MessageInsert } from './rows.js';
import { type Statements, prepareStatements } from './statements.js';

/**
 * Everything `append` needs to write a turn, already validated and flattened on the caller's
 * thread: only strings, numbers and arrays of strings, so it crosses to the writer thread as
 * cheaply as it can and means the same on either side.
 */
export interface AppendInput {
  row: MessageInsert;
  kind: ParticipantKind;
  displayName: string | null;
  channelName: string | null;
  mentions: string[];
}

/** A new turn's sequence number, or the stored row (raw, `MESSAGE_COLUMNS` order) it repeats. */
/** The bound parameters of `createConversation` (metadata as JSON). */
export interface ConversationInsert {
  id: string;
  channelType: string;
  channelId: string;
  channelName: string | null;
  threadId: string | null;
  scope: string;
  now: string;
  title: string | null;
  metadata: string | null;
}

/** The bound parameters of `updateConversation`. */
export interface ConversationChange {
  id: string;
  titleHow: 'set' | 'clear' | 'keep';
  title: string | null;
  metadataHow: 'set' | 'clear' | 'keep';
  metadata: string | null;
}

export type AppendOutcome = { seq: number } | { existing: unknown[] };

/**
 * Every write of the SQLite store as one synchronous call, each its own IMMEDIATE
 * transaction (a savepoint when called inside another, none inside `together`). The store
 * runs them on its own connection, or on the writer thread's (see `db/writer.ts`); the code
 * is the same.
 *
 * @example
 * ```ts
 * const writes = new StoreWrites(db);
 * writes.deleteMessages('telegram:42', ['a', 'b']); // 2
 * ```
 */
export class StoreWrites {
  private readonly sql: Statements;
  /** `insertTurn` in an IMMEDIATE transaction (a savepoint inside another; bare in `together`). */
  readonly #insert: (input: AppendInput) => number;
  /**
   * Set while `together` runs: each write runs without a savepoint of its own, and new turns
   * wait in `messages_fts_pending` to be indexed at the batch's end.
   */
  #inBatch = false;
  readonly #together: Database.Transaction<(batch: () => unknown) => unknown>;

  /** `sql`: the connection's statements when the caller has prepared them already. */
  constructor(
    readonly db: Database.Database,
    sql: Statements = prepareStatements(db),
  ) {
    this.sql = sql;
    // Wrapped once: making a better-sqlite3 transaction costs ~10 µs a call.
    this.#insert = this.immediate(this.insertTurn);
    this.deleteMessages = this.immediate(this.indexedFirst(this.deleteMessages));
    this.deleteConversation = this.immediate(this.indexedFirst(this.deleteConversation));
    this.forgetParticipant = this.immediate(this.indexedFirst(this.forgetParticipant));
    this.recordEdit = this.immediate(this.indexedFirst(this.recordEdit));
    // A tombstone changes no text: the turns waiting to be indexed can go on waiting.
    this.recordDeletion = this.immediate(this.recordDeletion);
    this.#together = db.transaction((batch: () => unknown) => {
      sql.holdSearch.run();
      this.#inBatch = true;
      try {
        const result = batch();
        sql.indexPending.run();
        sql.releaseSearch.run();
        return result;
      } finally {
        this.#inBatch = false;
      }
    });
  }

  /**
   * Runs `batch`, a series of these writes, in one IMMEDIATE transaction:
   *
   * - without the savepoint each write takes inside a transaction (it copies every page the
   *   write touches first);
   * - with the search index of the new turns put off to the end, then written in one pass in
   *   rowid order, which FTS5 stores as one segment. Indexed one by one, nearly every turn
   *   costs a segment of its own: a turn's rowid is below its conversation's previous one
   *   (see `messages_fts`). A write that changes or removes text (an edit, a delete, a
   *   forget) first indexes what waits, so that no turn is indexed twice.
   *
   * An append in a batch of 50 costs 30 µs instead of 41. All or nothing: when a write in
   * `batch` throws, a repeated turn included, the transaction rolls back and `together`
   * throws. The writer thread then runs the writes again one savepoint each, so that only
   * the failing one fails.
   *
   * @example
   * ```ts
   * writes.together(() => [writes.append(a), writes.append(b)]); // one commit
   * ```
   */
  together<R>(batch: () => R): R {
    return this.#together.immediate(batch) as R;
  }

  /**
   * Writes a new turn, or returns the stored row it repeats. The common case is a new turn,
   * so it is written straight away: a repeat is refused by the unique indexes, the turn's
   * transaction (or savepoint) rolls back, and only then is the row read. In `together` a
   * repeat rolls the whole batch back instead.
   */
  append(input: AppendInput): AppendOutcome {
    try {
      return { seq: this.#insert(input) };
    } catch (error) {
      // Without its savepoint (`together`) the turn's upserts stay: the batch must roll back.
      if (error !== REPEATED || this.#inBatch) throw error;
      const { row } = input;
      const s = this.sql;
      const seq = s.findDuplicateSeq.get(
        row.id,
        row.channelType,
        row.channelId,
        row.platformMessageId,
      );
      return { existing: s.getBySeq.get(seq) as unknown[] };
    }
  }

  /** The new turn's seq; throws REPEATED (rolling the turn back) for a stored one. */
  private insertTurn(input: AppendInput): number {
    const { row } = input;
    const s = this.sql;
    s.upsertParticipant.run({
      id: row.participantId,
      kind: input.kind,
      name: input.displayName,
      ts: row.timestamp,
    });
    s.upsertConversation.run({ ...row, channelName: input.channelName });
    const inserted = s.insertMessage.run(row);
    if (inserted.changes === 0) throw REPEATED;
    const seq = Number(inserted.lastInsertRowid);
    for (const participantId of input.mentions) {
      s.insertMention.run(seq, row.conversationId, participantId, row.timestamp);
    }
    return seq;
  }

  deleteMessages(conversationId: string, ids: string[]): number {
    const { changes } = this.sql.deleteMessages.run(conversationId, JSON.stringify(ids));
    if (changes > 0) this.sql.refreshConversation.run({ id: conversationId });
    return changes;
  }

  /** Inserts an empty conversation; false when the id is taken. */
  createConversation(row: ConversationInsert): boolean {
    return this.sql.createConversation.run(row).changes > 0;
  }

  /** Sets (`set`), clears (`clear`) or keeps (`keep`) the title and metadata; false when unknown. */
  updateConversation(row: ConversationChange): boolean {
    return this.sql.updateConversation.run(row).changes > 0;
  }

  deleteConversation(conversationId: string): boolean {
    const s = this.sql;
    const authors = s.authorsIn.all(conversationId) as string[];
    if (s.deleteConversation.run(conversationId).changes === 0) return false;
    s.deleteSilentParticipants.run(JSON.stringify(authors));
    s.optimizeSearch.run();
    return true;
  }

  forgetParticipant(participantId: string, mode: 'delete' | 'redact'): number {
    const s = this.sql;
    const touched = s.conversationsOf.all(participantId) as string[];
    // A rolling summary can retell what the person said: those of their conversations go
    // too (`assemblePrompt`'s summarizer writes a new one from the turns that remain).
    let summaries = 0;
    for (const id of touched) summaries += s.deleteSummaries.run(id).changes;
    let changes: number;
    if (mode === 'redact') {
      s.redactRevisions.run(participantId);
      changes = s.redactMessages.run(participantId).changes;
      s.redactParticipant.run(participantId);
    } else {
      changes = s.deleteMessagesOf.run(participantId).changes;
      s.deleteMentionsOf.run(participantId);
      s.clearRepliesTo.run(participantId);
      s.deleteParticipant.run(participantId);
    }
    for (const id of touched) {
      s.refreshConversation.run({ id });
      s.deleteEmptyConversation.run(id);
    }
    if (changes + summaries > 0) s.optimizeSearch.run();
    return changes;
  }

  recordEdit(ref: PlatformMessageRef, content: string, editedAt: string): boolean {
    const found = this.sql.findByPlatform.get(ref.channelType, ref.channelId, ref.messageId) as
      { seq: number; content: string } | undefined;
    if (found === undefined) return false;
    this.sql.insertRevision.run(found.seq, found.content, editedAt);
    this.sql.applyEdit.run(content, editedAt, found.seq);
    return true;
  }

  recordDeletion(ref: PlatformMessageRef, deletedAt: string): boolean {
    return this.sql.markDeleted.run({ ...ref, deletedAt }).changes > 0;
  }

  /** SQLite's automatic checkpoint threshold in pages; 0 turns it off (a Checkpointer runs them). */
  setAutoCheckpoint(pages: number): void {
    this.db.pragma(`wal_autocheckpoint = ${Math.max(0, Math.floor(pages))}`);
  }

  /** `fn`, first indexing the turns a batch holds back (see `together`), if any. */
  private indexedFirst<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
    return (...args) => {
      if (this.#inBatch) {
        this.sql.indexPending.run();
        this.sql.moveHold.run();
      }
      return fn.apply(this, args);
    };
  }

  private immediate<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
    const bare = fn.bind(this);
    const transaction = this.db.transaction(bare);
    return (...args) => (this.#inBatch ? bare(...args) : transaction.immediate(...args));
  }
}

/** Thrown inside `append`'s transaction to roll back a turn that is already stored. */
const REPEATED = Symbol('repeated turn');

/**
 * The names of the write calls, and each one's arguments and result, for the writer seam.
 *
 * @example
 * ```ts
 * const name: WriteName = 'append';
 * ```
 */
export type WriteName = Exclude<keyof StoreWrites, 'db' | 'together'>;
export type WriteArgs<K extends WriteName> = Parameters<StoreWrites[K]>;
export type WriteResult<K extends WriteName> = ReturnType<StoreWrites[K]>;

/**
 * Calls one write by name: how the writer thread runs what arrives on its port.
 *
 * @example
 * ```ts
 * callWrite(writes, 'deleteMessages', ['telegram:42', ['a']]); // 1
 * ```
 */
export function callWrite(writes: StoreWrites, name: WriteName, args: unknown[]): unknown {
  return (writes[name] as (...a: unknown[]) => unknown).apply(writes, args);
}
