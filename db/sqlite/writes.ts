import type Database from 'better-sqlite3';
import type { ParticipantKind, PlatformMessageRef } from '../../src/types.js';
import type { MessageInsert } from '../rows.js';
import { type Statements, prepareStatements } from './statements.js';
import { isBefore } from '../../src/timestamp.js';

/** Everything `append` needs to write a turn, already validated and flattened. */
export interface AppendInput {
  row: MessageInsert;
  /**
   * A press that uses a message's `once` buttons: that message's id, and the row it is written
   * as when another press used them first (`refusedUse`).
   */
  uses?: { messageId: string; refused: MessageInsert };
  kind: ParticipantKind;
  displayName: string | null;
  channelName: string | null;
  mentions: string[];
}

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

/**
 * A new turn's sequence number (`refused`: written refused, see `AppendInput.uses`), or the
 * stored row (raw, `MESSAGE_COLUMNS` order) it repeats.
 */
export type AppendOutcome = { seq: number; refused?: boolean } | { existing: unknown[] };

/**
 * Every write of the SQLite store as one synchronous call on its connection, each its own
 * IMMEDIATE transaction, or a savepoint inside `batch`.
 *
 * @example
 * ```ts
 * const writes = new StoreWrites(db);
 * writes.deleteMessages('telegram:42', ['a', 'b']); // 2
 * ```
 */
export class StoreWrites {
  private readonly sql: Statements;
  readonly #insert: (input: AppendInput) => { seq: number; refused?: boolean };
  readonly #begin: Database.Statement;
  readonly #commit: Database.Statement;
  readonly #rollback: Database.Statement;

  /** `sql`: the connection's statements when the caller has prepared them already. */
  constructor(
    readonly db: Database.Database,
    sql: Statements = prepareStatements(db),
  ) {
    this.sql = sql;
    // Wrapped once, not per call: making a better-sqlite3 transaction is not free.
    this.#insert = this.immediate(this.insertTurn);
    this.deleteMessages = this.immediate(this.deleteMessages);
    this.deleteConversation = this.immediate(this.deleteConversation);
    this.forgetParticipant = this.immediate(this.forgetParticipant);
    this.recordEdit = this.immediate(this.recordEdit);
    this.recordDeletion = this.immediate(this.recordDeletion);
    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
  }

  /**
   * Runs `calls` (these writes) in one IMMEDIATE transaction, each in a savepoint of its own,
   * so that one failing leaves the others written, and answers each. When the transaction
   * itself is lost (BEGIN or COMMIT fails, or an error such as a full disk rolls it back),
   * every call is answered with that error: none of them is stored.
   *
   * @example
   * ```ts
   * writes.batch([() => writes.append(a), () => writes.append(b)]); // one commit
   * ```
   */
  batch(calls: readonly (() => unknown)[]): BatchAnswer[] {
    if (calls.length === 1) return [answer(calls[0]!)];
    try {
      this.#begin.run();
    } catch (error) {
      return calls.map(() => ({ error }));
    }
    const answers: BatchAnswer[] = [];
    for (const call of calls) {
      const result = answer(call);
      // Some errors (a full disk, an I/O error) roll the whole transaction back.
      if ('error' in result && !this.db.inTransaction) return calls.map(() => result);
      answers.push(result);
    }
    try {
      this.#commit.run();
      return answers;
    } catch (error) {
      if (this.db.inTransaction) this.#rollback.run();
      return calls.map(() => ({ error }));
    }
  }

  /**
   * Writes a new turn, or returns the stored row it repeats. The common case is a new turn,
   * so it is written straight away: a repeat is refused by the unique indexes, the turn's
   * transaction (or savepoint) rolls back, and only then is the row read.
   */
  append(input: AppendInput): AppendOutcome {
    try {
      return this.#insert(input);
    } catch (error) {
      if (error !== REPEATED) throw error;
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

  /**
   * The new turn's seq, the use of a message a press uses taken with it; throws REPEATED
   * (rolling the turn and that use back) for a stored one.
   */
  private insertTurn(input: AppendInput): { seq: number; refused?: boolean } {
    const s = this.sql;
    const { uses } = input;
    const holder = uses && (s.takeUse.get(input.row.id, uses.messageId) as string | undefined);
    const refused = holder !== undefined && holder !== input.row.id;
    const row = refused ? uses!.refused : input.row;
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
    return refused ? { seq, refused } : { seq };
  }

  deleteMessages(conversationId: string, ids: string[]): number {
    return this.sql.deleteMessages.run(conversationId, JSON.stringify(ids)).changes;
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
    s.deleteRuns.run(conversationId);
    s.deleteSilentParticipants.run(JSON.stringify(authors));
    s.optimizeSearch.run();
    return true;
  }

  forgetParticipant(participantId: string, mode: 'delete' | 'redact'): number {
    const s = this.sql;
    const wrote = s.conversationsOf.all({ participant: participantId }) as string[];
    const threads = s.threadsUnder.all(participantId) as string[];
    const touched = [...new Set([...wrote, ...threads])];
    // A rolling summary can retell what the person said: those of their conversations and of
    // the threads under their turns go too (`assemblePrompt`'s summarizer writes a new one
    // from the turns that remain).
    let summaries = 0;
    for (const id of touched) summaries += s.deleteSummaries.run(id).changes;
    // The reactions they put on anyone's turns go in both modes (those on their deleted turns
    // go with the turns).
    s.deleteReactionsOf.run(participantId);
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
    s.forgetPrompts.run(JSON.stringify(touched));
    for (const id of touched) s.deleteEmptyConversation.run({ id });
    if (changes + summaries > 0) s.optimizeSearch.run();
    return changes;
  }

  recordEdit(ref: PlatformMessageRef, content: string, editedAt: string): boolean {
    const found = this.sql.findByPlatform.get(ref.channelType, ref.channelId, ref.messageId) as
      { seq: number; content: string; edited_at: string | null } | undefined;
    if (found === undefined) return false;
    // The same edit again (a redelivery, a dead letter imported twice) changes nothing, nor
    // does one older than the edit stored (a redelivery after a later edit).
    if (found.content === content && found.edited_at === editedAt) return true;
    if (isBefore(editedAt, found.edited_at)) return true;
    // A revision keeps an earlier text: an edit of the buttons alone keeps none.
    if (found.content !== content) this.sql.insertRevision.run(found.seq, found.content, editedAt);
    this.sql.applyEdit.run(content, editedAt, found.seq);
    return true;
  }

  recordDeletion(ref: PlatformMessageRef, deletedAt: string): boolean {
    if (this.sql.markDeleted.run({ ...ref, deletedAt }).changes > 0) return true;
    const { channelType, channelId, messageId } = ref;
    return this.sql.markPartDeleted.run(deletedAt, channelType, channelId, messageId).changes > 0;
  }

  private immediate<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
    const transaction = this.db.transaction(fn.bind(this));
    return (...args) => transaction.immediate(...args);
  }
}

/** Thrown inside `append`'s transaction to roll back a turn that is already stored. */
const REPEATED = Symbol('repeated turn');

/** One call's answer in a batch. */
export type BatchAnswer = { value: unknown } | { error: unknown };

function answer(call: () => unknown): BatchAnswer {
  try {
    return { value: call() };
  } catch (error) {
    return { error };
  }
}
