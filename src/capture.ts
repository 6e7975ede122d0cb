import { appendFileSync } from 'node:fs';
import type { StoreError } from './errors.js';
import { messageOf } from './errors.js';
import { consoleLogger, redactingLogger, type Logger } from './logger.js';
import { commitWith, errorFor } from './commit.js';
import { capabilitiesOf } from './store.js';
import type {
  CapturedChange,
  CommitResult,
  ConversationLog,
  ConversationStore,
  OperationResults,
  RunLedger,
  StoreOperation,
} from './store.js';

export interface CaptureOptions {
  /** Most operations waiting at once; past it a write is refused at once (default 10 000). */
  maxBuffer?: number;
  /** First retry delay in ms after a transient failure; doubles per failed retry (default 50). */
  retryBaseMs?: number;
  /**
   * Longest retry delay in ms (default 1 000): once a store that was down comes back, what
   * waits is committed within this long (the platform's deliveries wait for it).
   */
  retryMaxMs?: number;
  /**
   * The JSON-lines file operations go to when capture gives up on them (refused for good, or
   * still unwritten at `close`); `colloquy import <file>` writes them back. Without it they
   * are only logged.
   */
  deadLetterPath?: string;
  /** Where capture logs (default: the console logger); each call reaches it with secrets masked. */
  logger?: Logger;
  /**
   * Awaited after each committed op that changed something (a new turn, a known turn edited
   * or deleted), before its write resolves: the bot copies turns into agents' own stores and
   * tells `History` watchers here. What it throws is logged; the write stands.
   */
  committed?: (change: CapturedChange) => Promise<void> | void;
  /** Called once per failure, with the store's error as `cause`. */
  onError?: (error: StoreError) => void;
}

/** Counters since capture was made; `waiting` is the number of operations queued right now. */
export interface CaptureStats {
  /** Operations committed (a repeated turn included). */
  committed: number;
  /** Appends the store already had (same id or same platform message). */
  duplicates: number;
  /** Failed attempts (one operation tried three times counts three). */
  failures: number;
  /** Commits tried again after a transient failure. */
  retries: number;
  waiting: number;
  /** Operations given up on: refused for good, or unwritten at close. */
  deadLettered: number;
}

/**
 * An operation capture gave up on, as one line of the dead-letter file.
 *
 * @example
 * ```ts
 * for (const { op, error } of capture.deadLetters) console.error(op.kind, error);
 * ```
 */
export interface DeadLetter {
  op: StoreOperation;
  /** `rejected`: the store refused it for good; `unwritten`: still queued at close. */
  reason: 'rejected' | 'unwritten';
  error: string;
  /** When capture gave up (ISO 8601 UTC). */
  at: string;
}

interface Entry {
  op: StoreOperation;
  ticket: number;
  /** Cleared once the caller has its answer (a transient failure answers before the commit). */
  answer?: { resolve: (value: never) => void; reject: (error: StoreError) => void };
  /** For `track`: settled once the op is committed or given up on, not on a passing failure. */
  outcome?: { resolve: (value: never) => void; reject: (error: StoreError) => void };
}

/**
 * The bot's path to its store for what it captures: inbound turns, edits, deletions and
 * reactions, replies and their confirmations, agent runs' states and channel state
 * (`StoreOperation`). Other writes go to a store directly: rolling summaries (`assemblePrompt`, `History`), `History`'s
 * entries, leases and run claims of shared bots (`src/bot/shared.ts`), the captured changes
 * copied to an agent's own `conversationHistory` (`applyChange`), and whatever an agent or
 * interceptor writes through `ctx.store`.
 *
 * Capture keeps one FIFO of operations and, whenever no commit is in flight, hands the store
 * everything waiting in one `store.commit(ops)`: batches grow with load, with no timer.
 * `write(op)` resolves with the op's result once it is committed.
 *
 * When the store fails an op for a passing reason (`StoreError.transient` not false) the
 * caller's promise rejects at once, so a channel can refuse to acknowledge, while the op stays
 * at the head of the queue and is committed later, in order, after a backoff. While capture
 * backs off, new writes queue behind and are answered at once the same way. An op the store
 * refuses for good rejects with `StoreError { transient: false }` and goes to the dead-letter
 * file, as does whatever is still queued at `close`.
 *
 * @example
 * ```ts
 * const capture = new Capture(store, { deadLetterPath: './colloquy.db.dead-letter.jsonl' });
 * const { inserted } = await capture.write({ kind: 'append', message: turn });
 * await capture.close(5_000);
 * ```
 */
export class Capture {
  readonly #store: ConversationLog;
  /** The store's run ledger, read once: without one, ops go through the log's calls. */
  readonly #ledger: RunLedger | undefined;
  readonly #maxBuffer: number;
  readonly #retry: RetryOptions;
  readonly #deadLetterPath: string | undefined;
  readonly #logger: Logger;
  readonly #onError: ((error: StoreError) => void) | undefined;
  readonly #committed: CaptureOptions['committed'];

  #queue: Entry[] = [];
  #committing = false;
  #scheduled = false;
  /** The commit in flight, or the last one. */
  #commitDone: Promise<void> = Promise.resolve();
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The last transient failure, while capture backs off. */
  #failing: StoreError | undefined;
  #attempt = 0;
  #tickets = 0;
  /** Every op with a ticket up to this one has been tried at least once. */
  #tried = 0;
  #waiters: { ticket: number; resolve: () => void }[] = [];
  #closed = false;
  readonly #deadLetters: DeadLetter[] = [];
  readonly #counts = { committed: 0, duplicates: 0, failures: 0, retries: 0, deadLettered: 0 };

  constructor(store: ConversationStore, options: CaptureOptions = {}) {
    this.#store = store;
    this.#ledger = capabilitiesOf(store).ledger;
    this.#maxBuffer = Math.max(1, options.maxBuffer ?? 10_000);
    this.#retry = options;
    this.#deadLetterPath = options.deadLetterPath;
    this.#logger = redactingLogger(options.logger ?? consoleLogger);
    this.#onError = options.onError;
    this.#committed = options.committed;
  }

  get stats(): Readonly<CaptureStats> {
    return { ...this.#counts, waiting: this.#queue.length };
  }

  /** The operations given up on so far (the newest 1000), oldest first. */
  get deadLetters(): readonly DeadLetter[] {
    return [...this.#deadLetters];
  }

  /**
   * Queues `op` and resolves with its result once it is committed. Rejects with a
   * `StoreError`: `transient` (the op stays queued and is committed later) or not (given up,
   * dead-lettered).
   *
   * @example
   * ```ts
   * const { inserted } = await capture.write({ kind: 'append', message: turn });
   * ```
   */
  write<O extends StoreOperation>(op: O): Promise<OperationResults[O['kind']]> {
    return this.#enqueue(op);
  }

  /**
   * `write`, and also the op's final outcome: `committed` resolves once it is committed, after
   * however many retries, and rejects only when capture gives up on it (refused for good, or
   * unwritten at close), while `answered` rejects at once on a passing failure, as `write` does.
   *
   * @example
   * ```ts
   * const { answered, committed } = capture.track({ kind: 'append', message: turn });
   * const { inserted } = await answered.catch(() => committed);
   * ```
   */
  track<O extends StoreOperation>(
    op: O,
  ): {
    answered: Promise<OperationResults[O['kind']]>;
    committed: Promise<OperationResults[O['kind']]>;
  } {
    let outcome!: Entry['outcome'];
    const committed = new Promise<OperationResults[O['kind']]>(
      (resolve, reject) => (outcome = { resolve: resolve as (value: never) => void, reject }),
    );
    return { answered: this.#enqueue(op, outcome), committed };
  }

  #enqueue<O extends StoreOperation>(
    op: O,
    outcome?: Entry['outcome'],
  ): Promise<OperationResults[O['kind']]> {
    return new Promise((resolve, reject) => {
      if (this.#closed || this.#queue.length >= this.#maxBuffer) {
        const why = this.#closed ? 'capture is closed' : `${this.#maxBuffer} operations wait`;
        const error = errorFor(op, `cannot store ${op.kind}: ${why}`, true, this.#failing);
        outcome?.reject(error);
        return reject(error);
      }
      const entry: Entry = { op, ticket: ++this.#tickets, answer: { resolve, reject } };
      if (outcome !== undefined) entry.outcome = outcome;
      this.#queue.push(entry);
      if (this.#failing !== undefined) {
        this.#answer(entry, { ok: false, error: this.#failing });
        this.#tried = entry.ticket;
      }
      this.#schedule();
    });
  }

  /**
   * Resolves once every operation written before the call has been tried at least once:
   * committed, given up on, or held for a retry.
   *
   * @example
   * ```ts
   * void capture.write({ kind: 'append', message: reply }).catch(() => {});
   * await capture.settled();
   * ```
   */
  settled(): Promise<void> {
    const ticket = this.#tickets;
    if (this.#tried >= ticket) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ ticket, resolve }));
  }

  /**
   * Tries what is queued until the queue is empty or `timeoutMs` has passed, then stops
   * taking writes; what is left goes to the dead-letter file. Returns how many were left.
   */
  async close(timeoutMs = 5000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (let tries = 0; ; tries++) {
      while (this.#scheduled || this.#committing) await this.#commitDone;
      if (this.#queue.length === 0 || Date.now() >= deadline) break;
      this.#stopTimer();
      if (this.#failing !== undefined && tries > 0) {
        await new Promise((r) => setTimeout(r, Math.min(this.#delay(), deadline - Date.now())));
        this.#stopTimer();
      }
      this.#counts.retries++;
      this.#schedule();
    }
    this.#closed = true;
    this.#stopTimer();
    const left = this.#queue.splice(0);
    const why = this.#failing?.message ?? 'the store did not answer in time';
    for (const entry of left) {
      const error = errorFor(entry.op, `${entry.op.kind} unwritten at stop: ${why}`, false);
      this.#bury(entry.op, 'unwritten', error);
      this.#answer(entry, { ok: false, error });
      entry.outcome?.reject(error);
    }
    this.#wake(this.#tickets);
    return left.length;
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Starts a commit on the next microtask, so that writes made together commit together. */
  #schedule(): void {
    if (this.#scheduled || this.#committing || this.#timer !== undefined) return;
    if (this.#queue.length === 0) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.#commitDone = this.#commit();
    });
  }

  async #commit(): Promise<void> {
    if (this.#committing || this.#queue.length === 0) return;
    this.#committing = true;
    const batch = this.#queue.splice(0);
    const results = await commitWith(
      this.#store,
      this.#ledger,
      batch.map((entry) => entry.op),
    );
    if (this.#committed !== undefined) await this.#tell(batch, results);
    const held: Entry[] = [];
    batch.forEach((entry, i) => {
      const result = results[i]!;
      if (result.ok) {
        this.#counts.committed++;
        if (entry.op.kind === 'append' && !(result.value as { inserted: boolean }).inserted) {
          this.#counts.duplicates++;
        }
      } else {
        this.#counts.failures++;
        if (result.error.transient === false) {
          this.#reject(entry, result.error);
          entry.outcome?.reject(result.error);
        } else {
          if (entry.answer !== undefined) this.#report(result.error, 'warn');
          held.push(entry);
        }
      }
      this.#answer(entry, result);
      if (result.ok) entry.outcome?.resolve(result.value as never);
    });
    this.#tried = Math.max(this.#tried, batch[batch.length - 1]!.ticket);
    this.#queue.unshift(...held);
    const failed = held.find(() => true);
    if (failed === undefined) {
      this.#failing = undefined;
      this.#attempt = 0;
    } else {
      const error = results[batch.indexOf(failed)] as { error: StoreError };
      this.#failing = error.error;
      if (!this.#closed) this.#retryLater();
    }
    this.#committing = false;
    this.#wake(this.#tried);
    this.#schedule();
  }

  /** Hands each change the batch made to `committed`, in order. */
  async #tell(batch: Entry[], results: CommitResult[]): Promise<void> {
    for (const [i, { op }] of batch.entries()) {
      const result = results[i]!;
      if (!result.ok) continue;
      let change: CapturedChange | undefined;
      if (op.kind === 'append' || op.kind === 'reply') {
        const { inserted, message } = result.value as OperationResults['append'];
        if (inserted) change = { kind: 'append', message };
      } else if ((op.kind === 'edit' || op.kind === 'delete') && result.value === true) {
        change =
          op.kind === 'edit'
            ? { kind: 'edit', edit: op.edit }
            : { kind: 'delete', deletion: op.deletion };
      }
      if (change === undefined) continue;
      try {
        await this.#committed!(change);
      } catch (error) {
        this.#logger.error('capture: the committed hook threw', { error });
      }
    }
  }

  #retryLater(): void {
    const delay = this.#delay();
    this.#attempt++;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#counts.retries++;
      this.#schedule();
    }, delay);
    this.#timer.unref?.();
  }

  /** The wait before the next retry. */
  #delay(): number {
    return backoffMs(this.#attempt, this.#retry);
  }

  #answer(entry: Entry, result: CommitResult): void {
    const answer = entry.answer;
    if (answer === undefined) return;
    delete entry.answer;
    if (result.ok) answer.resolve(result.value as never);
    else
      answer.reject(
        errorFor(entry.op, result.error.message, result.error.transient !== false, result.error),
      );
  }

  #wake(ticket: number): void {
    while (this.#waiters[0] !== undefined && this.#waiters[0].ticket <= ticket) {
      this.#waiters.shift()!.resolve();
    }
  }

  /** An op the store refuses for good: dead-lettered, reported loudly, not retried. */
  #reject(entry: Entry, error: StoreError): void {
    this.#bury(entry.op, 'rejected', error);
    this.#report(error, 'error');
  }

  #bury(op: StoreOperation, reason: DeadLetter['reason'], error: StoreError): void {
    this.#counts.deadLettered++;
    const letter: DeadLetter = { op, reason, error: error.message, at: new Date().toISOString() };
    this.#deadLetters.push(letter);
    if (this.#deadLetters.length > 1000) this.#deadLetters.shift();
    const path = this.#deadLetterPath;
    try {
      if (path === undefined) throw new Error('no dead-letter file is set');
      appendFileSync(path, `${JSON.stringify(letter, plainJson)}\n`);
    } catch (cause) {
      this.#logger.error(
        `capture: could not keep an operation in a dead-letter file: ${messageOf(cause)}`,
        {
          deadLetter: letter,
        },
      );
    }
  }

  #report(error: StoreError, level: 'warn' | 'error'): void {
    this.#logger[level](`capture: ${error.message}`, {
      conversationId: error.conversationId,
      messageId: error.messageId,
      transient: error.transient !== false,
      error: error.cause,
    });
    try {
      this.#onError?.(error);
    } catch (handlerError) {
      this.#logger.error('capture: onError handler threw', { error: handlerError });
    }
  }
}

/** What JSON cannot hold as is (a BigInt) as a string, so an op always has its line. */
function plainJson(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/** How long capture waits between retries (`CaptureOptions`). */
export type RetryOptions = Pick<CaptureOptions, 'retryBaseMs' | 'retryMaxMs'>;

/**
 * The wait before retry `attempt` (from 0) after a passing store failure: exponential from
 * `retryBaseMs` with equal jitter, never above `retryMaxMs`; the defaults `CaptureOptions`
 * documents are the ones here.
 *
 * @example
 * ```ts
 * setTimeout(retry, backoffMs(attempt)); // 25–50 ms, then 50–100 ms, … up to 0.5–1 s
 * ```
 */
export function backoffMs(attempt: number, options: RetryOptions = {}): number {
  const { retryBaseMs = 50, retryMaxMs = 1_000 } = options;
  const cap = Math.min(retryMaxMs, retryBaseMs * 2 ** Math.min(attempt, 30));
  return cap / 2 + Math.random() * (cap / 2);
}
