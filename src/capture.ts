import type { Interceptor } from './chain.js';
import type { TurnContext } from './context.js';
import { StoreError } from './errors.js';
import { consoleLogger, type Logger } from './logger.js';
import type { ConversationStore } from './store.js';
import type { MessageDeletion, MessageEdit, NewMessage } from './types.js';

export interface CaptureOptions {
  /** Most operations held while the store is failing (default 10 000). */
  maxBuffer?: number;
  /** First retry delay in ms; doubles per failed retry (default 50). */
  retryBaseMs?: number;
  /** Longest retry delay in ms (default 30 000). */
  retryMaxMs?: number;
  logger?: Logger;
  /** Called once per failed attempt, with the turn's ids and the store's error as `cause`. */
  onError?: (error: StoreError) => void;
}

/** `stored`: written now; `duplicate`: the store already had it; `buffered`: held for retry. */
export type CaptureOutcome = 'stored' | 'duplicate' | 'buffered';

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
  /** Operations given up because the buffer was full. */
  dropped: number;
}

type Operation =
  | { kind: 'append'; message: NewMessage }
  | { kind: 'edit'; edit: MessageEdit }
  | { kind: 'delete'; deletion: MessageDeletion };

interface Entry {
  op: Operation;
  /** Set while the caller still waits for the outcome. */
  settle?: (outcome: CaptureOutcome) => void;
}

/**
 * Writes turns to a store strictly in order and never loses one to a passing failure.
 *
 * While the store works, each operation is written straight through. When a write fails the
 * operation goes into a bounded FIFO buffer and resolves `'buffered'`; a timer retries the
 * head with exponential backoff and jitter (capped at `retryMaxMs`), and every later
 * operation queues behind it until the buffer has drained, so order is kept. Each failed
 * attempt is reported to `onError` and `logger.warn`.
 *
 * When the buffer is full the OLDEST held operation is dropped (counted in `stats.dropped`,
 * logged with `logger.error`): the newest turns are the ones agents need for their next
 * prompt, and an operation the store rejects for good cannot block the queue forever.
 *
 * @example
 * ```ts
 * const writer = new CaptureWriter(store, { onError: (err) => bot.report(err) });
 * await writer.append(turn); // 'stored' | 'duplicate' | 'buffered'; never rejects
 * await writer.flush(5_000); // on shutdown
 * writer.close();
 * ```
 */
export class CaptureWriter {
  readonly #store: ConversationStore;
  readonly #maxBuffer: number;
  readonly #retryBaseMs: number;
  readonly #retryMaxMs: number;
  readonly #logger: Logger;
  readonly #onError: ((error: StoreError) => void) | undefined;

  /** Operations not yet applied, in order (the one being attempted is taken out). */
  #queue: Entry[] = [];
  #inFlight = false;
  /** True from a failure until the queue has fully drained: new operations wait behind. */
  #backlog = false;
  #running: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #attempt = 0;
  #closed = false;
  readonly #counts = { stored: 0, duplicates: 0, failures: 0, retries: 0, dropped: 0 };

  constructor(store: ConversationStore, options: CaptureOptions = {}) {
    this.#store = store;
    this.#maxBuffer = Math.max(1, options.maxBuffer ?? 10_000);
    this.#retryBaseMs = options.retryBaseMs ?? 50;
    this.#retryMaxMs = options.retryMaxMs ?? 30_000;
    this.#logger = options.logger ?? consoleLogger;
    this.#onError = options.onError;
  }

  get stats(): Readonly<CaptureStats> {
    const held = this.#backlog ? this.#queue.length + (this.#inFlight ? 1 : 0) : 0;
    return { ...this.#counts, buffered: held };
  }

  /** Stores a turn. Never rejects. */
  append(message: NewMessage): Promise<CaptureOutcome> {
    return this.#enqueue({ kind: 'append', message });
  }

  /** Records an edit, in order with the appends. Never rejects. */
  async edit(edit: MessageEdit): Promise<void> {
    await this.#enqueue({ kind: 'edit', edit });
  }

  /** Records a deletion, in order with the appends. Never rejects. */
  async delete(deletion: MessageDeletion): Promise<void> {
    await this.#enqueue({ kind: 'delete', deletion });
  }

  /**
   * Retries the held operations now, in order, and keeps retrying with backoff until the
   * buffer is empty or `timeoutMs` (default 0: one pass) has passed. True when empty.
   */
  async flush(timeoutMs = 0): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.#clearTimer();
      if (this.#backlog && !this.#running) this.#counts.retries++;
      await this.#run();
      if (this.#queue.length === 0 && !this.#inFlight) return true;
      const remaining = deadline - Date.now();
      if (remaining <= 0) return false;
      await new Promise((resolve) => setTimeout(resolve, Math.min(remaining, this.#delay())));
    }
  }

  /** Stops the retry timer; held operations stay until `flush`. */
  close(): void {
    this.#closed = true;
    this.#clearTimer();
  }

  #enqueue(op: Operation): Promise<CaptureOutcome> {
    if (this.#backlog) {
      this.#queue.push({ op });
      this.#dropOverflow();
      return Promise.resolve('buffered');
    }
    return new Promise((settle) => {
      this.#queue.push({ op, settle });
      void this.#run();
    });
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
      for (let entry = this.#queue.shift(); entry; entry = this.#queue.shift()) {
        this.#inFlight = true;
        const outcome = await this.#apply(entry.op);
        this.#inFlight = false;
        if (outcome === undefined) {
          this.#queue.unshift(entry);
          this.#holdAll();
          this.#dropOverflow();
          this.#scheduleRetry();
          return;
        }
        this.#attempt = 0;
        entry.settle?.(outcome);
      }
      this.#backlog = false;
    } finally {
      // Same tick as the loop's last check: an operation queued after this starts a new run.
      this.#running = undefined;
    }
  }

  /** Applies one operation; undefined when the store failed. */
  async #apply(op: Operation): Promise<Exclude<CaptureOutcome, 'buffered'> | undefined> {
    try {
      if (op.kind === 'append') {
        const { inserted } = await this.#store.append(op.message);
        this.#counts[inserted ? 'stored' : 'duplicates']++;
        return inserted ? 'stored' : 'duplicate';
      }
      const known =
        op.kind === 'edit'
          ? await this.#store.recordEdit(op.edit)
          : await this.#store.recordDeletion(op.deletion);
      if (!known) this.#logger.debug(`capture: ${op.kind} of an unknown message`, refOf(op));
      this.#counts.stored++;
      return 'stored';
    } catch (cause) {
      this.#counts.failures++;
      this.#report(op, cause);
      return undefined;
    }
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
    while (this.#queue.length > this.#maxBuffer) {
      const dropped = this.#queue.shift()!;
      this.#counts.dropped++;
      this.#logger.error('capture: buffer full, dropped the oldest held operation', {
        ...refOf(dropped.op),
        maxBuffer: this.#maxBuffer,
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

  #report(op: Operation, cause: unknown): void {
    const ref = refOf(op);
    const error = new StoreError(`capture: could not store ${op.kind}; held for retry`, {
      cause,
      conversationId: ref.conversationId,
      messageId: ref.messageId,
    });
    this.#logger.warn(error.message, { ...ref, attempt: this.#attempt + 1, error: cause });
    try {
      this.#onError?.(error);
    } catch (handlerError) {
      this.#logger.error('capture: onError handler threw', { error: handlerError });
    }
  }
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

/**
 * The first link of every chain: stores the inbound turn before anything else runs, stops a
 * turn the store already had (a platform retry must not be answered twice), and stores every
 * reply sent through `ctx.send` with the platform's message id. While the store is failing a
 * turn is `buffered`, so it cannot be recognised as a retry and the chain goes on: answering
 * twice is preferred to not answering.
 *
 * @example
 * ```ts
 * const chain = compose<TurnContext>([captureInterceptor(writer), ...userInterceptors, dispatch]);
 * await chain(ctx, async () => {});
 * ```
 */
export function captureInterceptor(writer: CaptureWriter): Interceptor<TurnContext> {
  return async (ctx, next) => {
    if ((await writer.append(ctx.message)) === 'duplicate') return;
    const send = ctx.send.bind(ctx);
    ctx.send = async (content, from) => {
      const sent = await send(content, from);
      await writer.append(sent);
      return sent;
    };
    await next();
  };
}
