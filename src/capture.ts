import { StoreError } from './errors.js';
import { consoleLogger, type Logger } from './logger.js';
import type { ConversationStore } from './store.js';
import type { MessageDeletion, MessageEdit, NewMessage } from './types.js';
import { messageOf } from './error-message.js';

export interface CaptureOptions {
  /** Most operations held while the store is failing (default 10 000). */
  maxBuffer?: number;
  /** Most bytes of text held while the store is failing, roughly (default 64 MiB). */
  maxBufferBytes?: number;
  /** How many rejected or dropped operations `deadLetters` keeps, newest last (default 1000). */
  maxDeadLetters?: number;
  /** First retry delay in ms; doubles per failed retry (default 50). */
  retryBaseMs?: number;
  /** Longest retry delay in ms (default 30 000). */
  retryMaxMs?: number;
  logger?: Logger;
  /**
   * Called once per failed attempt, with the turn's ids and the store's error as `cause`;
   * `transient: false` when the operation was rejected for good and will not be retried.
   */
  onError?: (error: StoreError) => void;
}

/**
 * `stored`: written now; `duplicate`: the store already had it; `buffered`: held for retry;
 * `rejected`: the store can never take it (see `deadLetters`).
 */
export type CaptureOutcome = 'stored' | 'duplicate' | 'buffered' | 'rejected';

/** Counters since the writer was made; `buffered` is the number of operations held right now. */
export interface CaptureStats {
  /** Turns, edits and deletions written. */
  stored: number;
  /** Appends the store already had (same id or same platform message). */
  duplicates: number;
  /** Failed attempts (one operation retried three times counts three). */
  failures: number;
  /** Attempts made by the retry timer or `flush`. */
  retries: number;
  buffered: number;
  /** Operations given up because the buffer was full (count or bytes). */
  dropped: number;
  /** Operations the store refused for good (not retried; kept in `deadLetters`). */
  rejected: number;
}

/** One operation capture handed to the store. */
export type CaptureOperation =
  | { kind: 'append'; message: NewMessage }
  | { kind: 'edit'; edit: MessageEdit }
  | { kind: 'delete'; deletion: MessageDeletion };

/**
 * An operation capture gave up on: `rejected` by the store for good, or `dropped` from a full
 * buffer. Kept so an operator can inspect it, fix it and append it by hand.
 *
 * @example
 * ```ts
 * for (const { op, error } of writer.deadLetters) console.error(op.kind, error.message);
 * ```
 */
export interface DeadLetter {
  op: CaptureOperation;
  reason: 'rejected' | 'dropped';
  error: StoreError;
  /** When capture gave up (ISO 8601 UTC). */
  at: string;
}

type Operation = CaptureOperation;

interface Entry {
  op: Operation;
  /** Rough size in bytes, for `maxBufferBytes`. */
  bytes: number;
  /** Its place in call order, for `settled`. */
  ticket: number;
  /** An append's turn keys (see `keysOf`), while it is unwritten. */
  keys?: readonly string[];
  /** Set while the caller still waits for the outcome. */
  settle?: (outcome: CaptureOutcome) => void;
}

/**
 * Writes turns to a store in order and never loses one to a passing failure.
 *
 * While the store works, each operation is written straight through, in call order. The
 * operations waiting are handed over together, up to 256 at once, when the store applies
 * writes in call order (`writesInOrder`); to any other store, operations on one platform
 * channel go one at a time (see `#takeWave`). When a write fails for
 * a passing reason (locked, full, closed, I/O; see {@link isPermanentStoreFailure}) the
 * operation goes into a bounded FIFO buffer and resolves `'buffered'`; a timer retries the
 * head with exponential backoff and jitter (capped at `retryMaxMs`), and every later
 * operation queues behind it until the buffer has drained, so order is kept. Each failed
 * attempt is reported to `onError` and `logger.warn`.
 *
 * An operation the store rejects for good (an invalid timestamp, a constraint, metadata that
 * cannot be serialised) is not retried: it resolves `'rejected'`, moves to `deadLetters`, is
 * counted in `stats.rejected` and reported to `onError` and `logger.error`, and the queue
 * moves on.
 *
 * When the buffer is full (`maxBuffer` operations or `maxBufferBytes` of text) the OLDEST
 * held operation is dropped (counted in `stats.dropped`, kept in `deadLetters`, logged with
 * `logger.error`): the newest turns are the ones agents need for their next prompt.
 *
 * @example
 * ```ts
 * const writer = new CaptureWriter(store, { onError: (err) => bot.report(err) });
 * await writer.append(turn); // 'stored' | 'duplicate' | 'buffered' | 'rejected'; never rejects
 * await writer.flush(5_000); // on shutdown
 * writer.close();
 * ```
 */
export class CaptureWriter {
  readonly #store: ConversationStore;
  readonly #maxBuffer: number;
  readonly #maxBufferBytes: number;
  readonly #maxDeadLetters: number;
  readonly #retryBaseMs: number;
  readonly #retryMaxMs: number;
  readonly #logger: Logger;
  readonly #onError: ((error: StoreError) => void) | undefined;

  /** Operations not yet applied, in order (the one being attempted is taken out). */
  #queue: Entry[] = [];
  /** Bytes held in `#queue`. */
  #bytes = 0;
  /** Operations handed to the store and not yet answered (one wave). */
  #wave: Entry[] = [];
  #tickets = 0;
  /** Callers of `settled`, each waiting for the operations up to its ticket. */
  #waiters: { ticket: number; resolve: () => void }[] = [];
  /** The ids and platform messages of the appends not yet written, counted. */
  readonly #unwritten = new Map<string, number>();
  /** True from a failure until the queue has fully drained: new operations wait behind. */
  #backlog = false;
  #running: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #attempt = 0;
  #closed = false;
  /** `flush` calls under way: the store should hand over what it holds back at once. */
  #flushing = 0;
  readonly #deadLetters: DeadLetter[] = [];
  readonly #counts = {
    stored: 0,
    duplicates: 0,
    failures: 0,
    retries: 0,
    dropped: 0,
    rejected: 0,
  };

  constructor(store: ConversationStore, options: CaptureOptions = {}) {
    this.#store = store;
    this.#maxBuffer = Math.max(1, options.maxBuffer ?? 10_000);
    this.#maxBufferBytes = Math.max(1, options.maxBufferBytes ?? 64 * 1024 * 1024);
    this.#maxDeadLetters = Math.max(0, options.maxDeadLetters ?? 1000);
    this.#retryBaseMs = options.retryBaseMs ?? 50;
    this.#retryMaxMs = options.retryMaxMs ?? 30_000;
    this.#logger = options.logger ?? consoleLogger;
    this.#onError = options.onError;
  }

  get stats(): Readonly<CaptureStats> {
    const held = this.#backlog ? this.#queue.length + this.#wave.length : 0;
    return { ...this.#counts, buffered: held };
  }

  /** The newest operations given up (rejected for good, or dropped from a full buffer), oldest first. */
  get deadLetters(): readonly DeadLetter[] {
    return [...this.#deadLetters];
  }

  /** Stores a turn. Never rejects. */
  append(message: NewMessage): Promise<CaptureOutcome> {
    return this.#enqueue({ kind: 'append', message });
  }

  /**
   * Queues an inbound turn and says whether it is new without waiting for the write: a turn
   * queued here and not yet written, or one the store has already (`store.has`), is a
   * `'duplicate'` and is not queued again. With a store that has no `has`, the turn is written
   * first and the outcome decides. A store failing to answer counts as new (answering twice
   * is preferred to not answering). Never rejects; the write goes on behind (see `settled`).
   * When more than 512 operations wait for a working store, it waits for them first, so a
   * store that falls behind slows the turns down instead of filling memory.
   *
   * @example
   * ```ts
   * if ((await writer.accept(turn)) === 'duplicate') return; // a platform retry
   * ```
   */
  async accept(message: NewMessage): Promise<'new' | 'duplicate'> {
    const store = this.#store;
    if (store.has === undefined) {
      return (await this.append(message)) === 'duplicate' ? 'duplicate' : 'new';
    }
    const keys = keysOf(message);
    if (keys.some((key) => this.#unwritten.has(key))) return this.#duplicate();
    // Held from here, so the same turn arriving while the store looks is a duplicate too.
    this.#count(keys, 1);
    if (await store.has(message).catch(() => false)) {
      this.#count(keys, -1);
      return this.#duplicate();
    }
    // Back-pressure: when the store falls behind, new turns wait for it rather than pile up.
    if (this.#queue.length >= MAX_QUEUED && !this.#backlog) await this.settled();
    void this.#enqueue({ kind: 'append', message }, keys);
    return 'new';
  }

  /**
   * Resolves once every operation asked for before the call has been tried: written,
   * rejected, or held for retry while the store fails. Reads made after it see those turns
   * (the Bot's agents read through such a view). Never rejects.
   *
   * @example
   * ```ts
   * void writer.append(reply);
   * await writer.settled();
   * await store.get(reply.conversationId); // holds the reply
   * ```
   */
  settled(): Promise<void> {
    const ticket = this.#tickets;
    if (this.#triedUpTo(ticket)) return Promise.resolve();
    // A store may hold background appends back to commit them together: not these.
    this.#store.flush?.();
    return new Promise((resolve) => this.#waiters.push({ ticket, resolve }));
  }

  #duplicate(): 'duplicate' {
    this.#counts.duplicates++;
    return 'duplicate';
  }

  #triedUpTo(ticket: number): boolean {
    const oldest = this.#wave[0]?.ticket ?? this.#queue[0]?.ticket ?? Infinity;
    return this.#backlog || oldest > ticket;
  }

  /** Waiters come in ticket order, and a ticket tried means every earlier one was too. */
  #wake(): void {
    while (this.#waiters[0] !== undefined && this.#triedUpTo(this.#waiters[0].ticket)) {
      this.#waiters.shift()!.resolve();
    }
  }

  #count(keys: readonly string[], by: 1 | -1): void {
    for (const key of keys) {
      const n = (this.#unwritten.get(key) ?? 0) + by;
      if (n > 0) this.#unwritten.set(key, n);
      else this.#unwritten.delete(key);
    }
  }

  /** An operation left the writer (written, rejected or dropped): its turn is no longer unwritten. */
  #done(entry: Entry): void {
    if (entry.keys !== undefined) this.#count(entry.keys, -1);
  }

  /** Records an edit, in order with the appends. Never rejects. */
  edit(edit: MessageEdit): Promise<CaptureOutcome> {
    return this.#enqueue({ kind: 'edit', edit });
  }

  /** Records a deletion, in order with the appends. Never rejects. */
  delete(deletion: MessageDeletion): Promise<CaptureOutcome> {
    return this.#enqueue({ kind: 'delete', deletion });
  }

  /**
   * Retries the held operations now, in order, and keeps retrying with backoff until the
   * buffer is empty or `timeoutMs` (default 0: one pass) has passed. True when empty.
   */
  async flush(timeoutMs = 0): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    this.#flushing++;
    this.#store.flush?.();
    try {
      for (;;) {
        this.#clearTimer();
        if (this.#backlog && !this.#running) this.#counts.retries++;
        await this.#run();
        if (this.#queue.length === 0 && this.#wave.length === 0) return true;
        const remaining = deadline - Date.now();
        if (remaining <= 0) return false;
        await new Promise((resolve) => setTimeout(resolve, Math.min(remaining, this.#delay())));
      }
    } finally {
      this.#flushing--;
    }
  }

  /** Stops the retry timer; held operations stay until `flush`. */
  close(): void {
    this.#closed = true;
    this.#clearTimer();
  }

  /** `held`: the append's keys, already counted as unwritten by the caller. */
  #enqueue(op: Operation, held?: readonly string[]): Promise<CaptureOutcome> {
    const entry: Entry = { op, bytes: sizeOf(op), ticket: ++this.#tickets };
    if (op.kind === 'append') {
      entry.keys = held ?? keysOf(op.message);
      if (held === undefined) this.#count(entry.keys, 1);
    }
    if (this.#backlog) {
      this.#push(entry);
      this.#dropOverflow();
      return Promise.resolve('buffered');
    }
    return new Promise((settle) => {
      entry.settle = settle;
      this.#push(entry);
      void this.#run();
    });
  }

  #push(entry: Entry): void {
    this.#queue.push(entry);
    this.#bytes += entry.bytes;
  }

  #shift(): Entry | undefined {
    const entry = this.#queue.shift();
    if (entry !== undefined) this.#bytes -= entry.bytes;
    return entry;
  }

  /** Starts the worker unless it runs already; resolves when it stops. */
  #run(): Promise<void> {
    this.#running ??= this.#work();
    return this.#running;
  }

  async #work(): Promise<void> {
    // Start on a later tick, so `#running` is set before this run can finish.
    await undefined;
    try {
      for (let wave = this.#takeWave(); wave.length > 0; wave = this.#takeWave()) {
        this.#wave = wave;
        const applied = Promise.all(wave.map((entry) => this.#apply(entry.op)));
        // Someone waits for these: the store should not hold them back (see `settled`).
        if (this.#waiters.length > 0 || this.#flushing > 0) this.#store.flush?.();
        const outcomes = await applied;
        this.#wave = [];
        const failed = wave.filter((_, i) => outcomes[i] === 'buffered');
        if (failed.length === 0 && outcomes.some((outcome) => outcome !== 'rejected')) {
          this.#attempt = 0;
        }
        wave.forEach((entry, i) => {
          if (outcomes[i] === 'buffered') return;
          this.#done(entry);
          entry.settle?.(outcomes[i]!);
        });
        if (failed.length > 0) {
          // Back at the head, in their order: nothing queued behind them goes first.
          this.#queue.unshift(...failed);
          for (const entry of failed) this.#bytes += entry.bytes;
          this.#holdAll();
          this.#dropOverflow();
          this.#scheduleRetry();
          return;
        }
        this.#wake();
      }
      this.#backlog = false;
    } finally {
      // Same tick as the loop's last check: an operation queued after this starts a new run.
      this.#running = undefined;
      this.#wake();
    }
  }

  /**
   * The next operations to hand the store at once, from the head of the queue, in order. A
   * store that applies writes in call order (`writesInOrder`) takes up to `MAX_WAVE` of them,
   * whatever their channel. Any other store gets operations on one platform channel one at a
   * time (an edit after its turn, a reply after the turn it answers): the wave stops at the
   * first operation on a channel already in it. Either way a store can commit a wave as one
   * (the SQLite store's writer thread does). In a wave of an ordered store, a write after one
   * that fails for a passing reason may be written already: the failed one is then written
   * after it, on retry (the SQLite store fails a whole batch at once, so this takes a failure
   * inside one write's savepoint, such as a full disk that frees up between two writes).
   */
  #takeWave(): Entry[] {
    const wave: Entry[] = [];
    const places = this.#store.writesInOrder === true ? undefined : new Set<string>();
    for (let head = this.#queue[0]; head !== undefined; head = this.#queue[0]) {
      if (wave.length >= MAX_WAVE) break;
      if (places !== undefined) {
        const place = placeOf(head.op);
        if (places.has(place)) break;
        places.add(place);
      }
      wave.push(this.#shift()!);
    }
    return wave;
  }

  /** Applies one operation; `buffered` when it should be retried, `rejected` when never. */
  #apply(op: Operation): Promise<CaptureOutcome> {
    const failed = (cause: unknown) => this.#failed(op, cause);
    try {
      if (op.kind !== 'append') return this.#record(op).then(undefined, failed);
      // A promise chain, not an async function: capture calls this twice a turn.
      return this.#store.append(op.message, BACKGROUND).then(({ inserted }) => {
        this.#counts[inserted ? 'stored' : 'duplicates']++;
        return inserted ? 'stored' : 'duplicate';
      }, failed);
    } catch (cause) {
      return Promise.resolve(failed(cause));
    }
  }

  async #record(op: Exclude<Operation, { kind: 'append' }>): Promise<CaptureOutcome> {
    const known =
      op.kind === 'edit'
        ? await this.#store.recordEdit(op.edit)
        : await this.#store.recordDeletion(op.deletion);
    if (!known) this.#logger.debug(`capture: ${op.kind} of an unknown message`, refOf(op));
    this.#counts.stored++;
    return 'stored';
  }

  /** A failed attempt: `rejected` when it can never succeed, `buffered` for a retry. */
  #failed(op: Operation, cause: unknown): CaptureOutcome {
    this.#counts.failures++;
    if (isPermanentStoreFailure(cause)) {
      this.#reject(op, cause);
      return 'rejected';
    }
    this.#report(op, cause);
    return 'buffered';
  }

  /** After a failure every waiting caller gets 'buffered' and later ones queue behind. */
  #holdAll(): void {
    this.#backlog = true;
    for (const entry of this.#queue) {
      entry.settle?.('buffered');
      delete entry.settle;
    }
  }

  #dropOverflow(): void {
    while (
      this.#queue.length > this.#maxBuffer ||
      (this.#bytes > this.#maxBufferBytes && this.#queue.length > 0)
    ) {
      const dropped = this.#shift()!;
      this.#done(dropped);
      this.#counts.dropped++;
      const ref = refOf(dropped.op);
      const error = new StoreError('capture: buffer full, dropped the oldest held operation', {
        conversationId: ref.conversationId,
        messageId: ref.messageId,
        transient: false,
      });
      this.#bury(dropped.op, 'dropped', error);
      this.#logger.error(error.message, {
        ...ref,
        maxBuffer: this.#maxBuffer,
        maxBufferBytes: this.#maxBufferBytes,
        dropped: this.#counts.dropped,
      });
    }
  }

  #scheduleRetry(): void {
    if (this.#closed) return;
    this.#clearTimer();
    const delay = this.#delay();
    this.#attempt++;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#counts.retries++;
      void this.#run();
    }, delay);
    this.#timer.unref?.();
  }

  /** Exponential backoff with equal jitter: somewhere in [cap/2, cap], never above retryMaxMs. */
  #delay(): number {
    const cap = Math.min(this.#retryMaxMs, this.#retryBaseMs * 2 ** Math.min(this.#attempt, 30));
    return cap / 2 + Math.random() * (cap / 2);
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #bury(op: Operation, reason: DeadLetter['reason'], error: StoreError): void {
    if (this.#maxDeadLetters === 0) return;
    this.#deadLetters.push({ op, reason, error, at: new Date().toISOString() });
    if (this.#deadLetters.length > this.#maxDeadLetters) this.#deadLetters.shift();
  }

  /** A write that can never succeed: dead-lettered, reported loudly, not retried. */
  #reject(op: Operation, cause: unknown): void {
    const ref = refOf(op);
    this.#counts.rejected++;
    const error = new StoreError(
      `capture: the store rejected ${op.kind} for good; not retried: ${messageOf(cause)}`,
      { cause, conversationId: ref.conversationId, messageId: ref.messageId, transient: false },
    );
    this.#bury(op, 'rejected', error);
    this.#logger.error(error.message, { ...ref, rejected: this.#counts.rejected, error: cause });
    this.#notify(error);
  }

  #report(op: Operation, cause: unknown): void {
    const ref = refOf(op);
    const error = new StoreError(`capture: could not store ${op.kind}; held for retry`, {
      cause,
      conversationId: ref.conversationId,
      messageId: ref.messageId,
      transient: true,
    });
    this.#logger.warn(error.message, { ...ref, attempt: this.#attempt + 1, error: cause });
    this.#notify(error);
  }

  #notify(error: StoreError): void {
    try {
      this.#onError?.(error);
    } catch (handlerError) {
      this.#logger.error('capture: onError handler threw', { error: handlerError });
    }
  }
}

/**
 * True when a store failure will never pass, so retrying the write is pointless: a
 * `StoreError` that says so (`transient: false`), a SQLite constraint or type mismatch, or a
 * value that cannot be serialised (`TypeError`, `DataCloneError`), anywhere in the `cause`
 * chain. Everything else — busy, locked, full, I/O, a closed store, an unknown error — is
 * taken as passing.
 *
 * @example
 * ```ts
 * isPermanentStoreFailure(new StoreError('bad timestamp', { transient: false })); // true
 * isPermanentStoreFailure(Object.assign(new Error('locked'), { code: 'SQLITE_BUSY' })); // false
 * ```
 */
export function isPermanentStoreFailure(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Object && depth < 5; depth++) {
    if (e instanceof StoreError && e.transient !== undefined) return !e.transient;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_')) {
      return /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/.test(code);
    }
    if (e instanceof TypeError || (e as { name?: unknown }).name === 'DataCloneError') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** Capture's appends: nobody waits on them (see `AppendOptions.background`). */
const BACKGROUND = Object.freeze({ background: true });

/**
 * Most operations handed to the store at once. A store may hold background appends back for a
 * moment to commit them together (the SQLite store's writer thread looks every 25 ms), so a
 * wave must carry what a busy bot captures meanwhile.
 */
const MAX_WAVE = 256;

/** Operations waiting for a working store past which `accept` waits for them first. */
const MAX_QUEUED = 512;

/** The platform channel an operation writes to: operations on one go one at a time. */
function placeOf(op: Operation): string {
  const { channelType, channelId } =
    op.kind === 'append' ? op.message.metadata : op.kind === 'edit' ? op.edit : op.deletion;
  return `${channelType}\u0000${channelId}`;
}

/** Roughly what an operation weighs in memory: its text, plus a little for the rest. */
function sizeOf(op: Operation): number {
  const text =
    op.kind === 'append' ? op.message.content : op.kind === 'edit' ? op.edit.content : '';
  return 256 + text.length * 2;
}

/** What makes two appends the same turn: the id, and the platform message when there is one. */
function keysOf({ id, metadata }: NewMessage): string[] {
  const { channelType, channelId, messageId } = metadata;
  const keys = [`id\u0000${id}`];
  if (messageId !== undefined)
    keys.push(`ref\u0000${channelType}\u0000${channelId}\u0000${messageId}`);
  return keys;
}

function refOf(op: Operation): {
  conversationId?: string;
  messageId?: string;
  platformMessageId?: string;
} {
  if (op.kind === 'append') {
    const { conversationId, id, metadata } = op.message;
    return { conversationId, messageId: id, platformMessageId: metadata.messageId };
  }
  const ref = op.kind === 'edit' ? op.edit : op.deletion;
  return { platformMessageId: `${ref.channelType}:${ref.channelId}:${ref.messageId}` };
}
