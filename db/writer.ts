import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { StoreError } from '../src/errors.js';
import type { Statements } from './statements.js';
import { WAL_LIMIT, startWorker } from './thread-options.js';
import {
  type Call,
  Doorbell,
  type Reply,
  type Request,
  type WriterThreadData,
  revive,
} from './writer-protocol.js';
import {
  StoreWrites,
  type WriteArgs,
  type WriteName,
  type WriteResult,
  callWrite,
} from './writes.js';

/**
 * Where the SQLite store's writes run: on its own connection (`InlineWriter`) or on a worker
 * thread with a connection of its own (`ThreadWriter`). Either way they run one at a time, in
 * the order they were asked for.
 *
 * @example
 * ```ts
 * const { seq } = await writer.run('append', input);
 * ```
 */
export interface Writer {
  readonly mode: 'inline' | 'thread';
  /** As soon as it can (see `FirstInlineWriter`). */
  run<K extends WriteName>(name: K, ...args: WriteArgs<K>): Promise<WriteResult<K>>;
  /** For a caller that does not wait on it: on the writer thread when there is one. */
  queue<K extends WriteName>(name: K, ...args: WriteArgs<K>): Promise<WriteResult<K>>;
  /** Hands the calls `queue` holds back to the thread now. */
  flush(): void;
  /** Finishes the writes already asked for, then stops. */
  close(): Promise<void>;
}

/**
 * Writes on the caller's connection, on the caller's thread: for `:memory:` databases, which
 * a second connection cannot see, and for `writerThread: false`.
 *
 * @example
 * ```ts
 * const writer = new InlineWriter(db);
 * ```
 */
export class InlineWriter implements Writer {
  readonly mode = 'inline';
  readonly #writes: StoreWrites;

  constructor(db: Database.Database, sql?: Statements) {
    this.#writes = new StoreWrites(db, sql);
  }

  async run<K extends WriteName>(name: K, ...args: WriteArgs<K>): Promise<WriteResult<K>> {
    return this.apply(name, args) as Promise<WriteResult<K>>;
  }

  queue<K extends WriteName>(name: K, ...args: WriteArgs<K>): Promise<WriteResult<K>> {
    return this.run(name, ...args);
  }

  /** `run`, with the call named at run time (a thread's calls, replayed). */
  async apply(name: WriteName, args: unknown[]): Promise<unknown> {
    return callWrite(this.#writes, name, args);
  }

  flush(): void {}

  async close(): Promise<void> {}
}

interface Waiting {
  name: WriteName;
  args: unknown[];
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** Handed to the thread (not just waiting in the outbox). */
  posted: boolean;
}

/**
 * Writes on a worker thread that owns a second connection to the file, so a commit (and a
 * wait for another process's write lock) never stalls the event loop. The calls made during
 * one turn of the event loop cross a `MessagePort` as one message, in order, and while a
 * batch is with the thread the calls made meanwhile wait and go as the next one; the thread
 * commits a batch in one transaction (group commit; a call that fails fails alone, see
 * `commitBatch` in `db/batch.ts`), and answers it in one message. A call someone waits for
 * (`run`, or `flush`) rings the thread awake; background calls (`queue`: capture) wait for its
 * next look, at most `POLL_MS` later while writes keep coming (see `Doorbell`), so a busy bot
 * pays for no wake-ups.
 *
 * If the thread cannot start (it cannot open the file, or the sources run without tsx) the
 * calls made so far, and every later one, run inline instead, so the store works either way.
 * If it stops later, the calls it held fail with a transient StoreError (capture retries
 * them; an append is idempotent) and later ones run inline.
 *
 * @example
 * ```ts
 * const writer = new ThreadWriter('./colloquy.db', 5000, () => new InlineWriter(db));
 * ```
 */
export class ThreadWriter implements Writer {
  #inline: InlineWriter | undefined;
  #ready = false;
  #next = 0;
  readonly #waiting = new Map<number, Waiting>();
  /** Calls made this turn of the event loop, posted together at its end. */
  #outbox: Call[] = [];
  /** A batch is with the thread: later calls wait in the outbox until it answers. */
  #busy = false;
  /** The post of the outbox set for the end of this turn of the event loop. */
  #postSoon: ReturnType<typeof setImmediate> | undefined;
  /** A call in the outbox came from `run`, or `flush` was called: ring when it is posted. */
  #urgent = false;
  /** The batch with the thread was rung for (the thread is on it now, not at its next look). */
  #rung = false;
  /** Shared with the thread: see `Doorbell` in `writer-protocol.ts`. */
  readonly #bell = new Int32Array(new SharedArrayBuffer(8));
  readonly #worker: Worker | undefined;
  readonly #port: MessagePort;
  #closing: Promise<void> | undefined;

  /** `start`: how the thread is started (tests keep a handle on it). */
  constructor(
    path: string,
    busyTimeoutMs: number,
    private readonly fallback: () => InlineWriter,
    walLimitBytes = WAL_LIMIT,
    start: typeof startWriterThread = startWriterThread,
  ) {
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    try {
      const bell = this.#bell.buffer as SharedArrayBuffer;
      const data: WriterThreadData = { path, busyTimeoutMs, walLimitBytes, port: port2, bell };
      this.#worker = start(data, port2);
    } catch (error) {
      this.#fail(error);
      return;
    }
    port1.on('message', (reply: Reply) => this.#receive(reply));
    port1.on('messageerror', (error) => this.#fail(error));
    this.#worker.on('error', (error) => this.#fail(error));
    this.#worker.on('exit', (code) => {
      if (this.#closing === undefined) this.#fail(new Error(`it exited with code ${code}`));
    });
    // Neither keeps the process alive by itself, only while a call waits for its answer.
    this.#worker.unref();
    port1.unref();
  }

  get mode(): 'inline' | 'thread' {
    return this.#inline === undefined ? 'thread' : 'inline';
  }

  /** Nothing is waiting for the thread: a write elsewhere cannot overtake one of its calls. */
  get idle(): boolean {
    return this.#waiting.size === 0;
  }

  /** As soon as the thread is free. */
  run<K extends WriteName>(name: K, ...args: WriteArgs<K>): Promise<WriteResult<K>> {
    return this.#call(true, name, args);
  }

  /** At the thread's next look, within `POLL_MS` (see `Doorbell`), with the calls made meanwhile. */
  queue<K extends WriteName>(name: K, ...args: WriteArgs<K>): Promise<WriteResult<K>> {
    return this.#call(false, name, args);
  }

  /** The calls `queue` made go now: the batch with the thread, then the outbox. */
  flush(): void {
    if (this.#inline !== undefined || this.#waiting.size === 0) return;
    this.#urgent = true;
    if (this.#busy && !this.#rung) this.#ring();
  }

  #call<K extends WriteName>(urgent: boolean, name: K, args: WriteArgs<K>) {
    if (this.#inline !== undefined) return this.#inline.run(name, ...args);
    const id = ++this.#next;
    return new Promise<WriteResult<K>>((resolve, reject) => {
      this.#waiting.set(id, {
        name,
        args,
        resolve: resolve as (v: unknown) => void,
        reject,
        posted: false,
      });
      if (this.#waiting.size === 1) this.#port.ref();
      this.#outbox.push({ id, name, args });
      if (urgent) this.flush();
      if (!this.#busy) this.#postSoon ??= setImmediate(() => this.#post());
    });
  }

  /**
   * Wakes the thread now. Posting alone does not (see `Doorbell`): waking a sleeping thread
   * costs the event loop 30–150 µs on the machines measured, more than a batch of captured
   * turns costs to send, so background calls wait for the thread's next look instead.
   */
  #ring(): void {
    this.#rung = true;
    Atomics.add(this.#bell, Doorbell.rings, 1);
    Atomics.notify(this.#bell, Doorbell.rings);
  }

  /** Hands the calls made this turn to the thread, as one message. */
  #post(): void {
    this.#postSoon = undefined;
    const calls = this.#outbox;
    this.#outbox = [];
    if (calls.length === 0) return;
    try {
      this.#port.postMessage(calls satisfies Request);
      for (const { id } of calls) this.#waiting.get(id)!.posted = true;
      this.#busy = true;
    } catch {
      // A value structured clone cannot copy (a function, a symbol) is in one of them: send
      // them one by one, refusing only those.
      let posted = 0;
      for (const call of calls) posted += this.#postOne(call) ? 1 : 0;
      this.#busy = posted > 0;
    }
    this.#rung = false;
    if (this.#busy && (this.#urgent || Atomics.load(this.#bell, Doorbell.asleep) === 1)) {
      this.#ring();
    }
    this.#urgent = false;
  }

  /** False when the call could not be handed over (it is refused). */
  #postOne(call: Call): boolean {
    const waiting = this.#waiting.get(call.id)!;
    try {
      this.#port.postMessage([call] satisfies Request);
      waiting.posted = true;
      return true;
    } catch (error) {
      this.#settled(call.id);
      const reason = error instanceof Error ? error.message : String(error);
      waiting.reject(
        new TypeError(`cannot hand this ${call.name} to the writer thread: ${reason}`),
      );
      return false;
    }
  }

  #stopPostSoon(): void {
    if (this.#postSoon !== undefined) clearImmediate(this.#postSoon);
    this.#postSoon = undefined;
  }

  #settled(id: number): void {
    this.#waiting.delete(id);
    if (this.#waiting.size === 0) this.#port.unref();
  }

  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      const worker = this.#worker;
      if (worker === undefined || this.#inline !== undefined) return resolve();
      worker.once('exit', () => resolve());
      worker.ref();
      this.#stopPostSoon();
      this.#post();
      this.#port.postMessage([{ close: true }] satisfies Request);
      this.#ring();
    }).then(() => {
      this.#port.close();
      this.#rejectWaiting(new StoreError('the store closed before this write finished'));
    });
    return this.#closing;
  }

  #receive(reply: Reply): void {
    if ('ready' in reply) {
      this.#ready = true;
      return;
    }
    if ('failed' in reply) return this.#fail(revive(reply.failed));
    // What queued up meanwhile goes now, as one batch (group commit: the busier, the bigger).
    this.#busy = false;
    this.#stopPostSoon();
    this.#post();
    for (const answer of reply) {
      const waiting = this.#waiting.get(answer.id);
      if (waiting === undefined) continue;
      this.#settled(answer.id);
      if ('error' in answer) waiting.reject(revive(answer.error));
      else waiting.resolve(answer.value);
    }
  }

  /** The thread could not start, or stopped: carry on inline. */
  #fail(cause: unknown): void {
    if (this.#inline !== undefined) return;
    this.#inline = this.fallback();
    const reason = cause instanceof Error ? cause.message : String(cause);
    process.emitWarning(
      `the SQLite writer thread ${this.#ready ? 'stopped' : 'could not start'} (${reason}); ` +
        `the store writes on the main thread from now on`,
      { type: 'ColloquyWarning', code: 'COLLOQUY_WRITER_INLINE' },
    );
    this.#port.close();
    void this.#worker?.terminate();
    this.#stopPostSoon();
    this.#outbox = [];
    const waiting = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const call of waiting) {
      // What never reached the thread's connection runs here, in order.
      if (!this.#ready || !call.posted) {
        this.#inline.apply(call.name, call.args).then(call.resolve, call.reject);
        continue;
      }
      call.reject(
        new StoreError(
          `the store's writer thread stopped (${reason}); this ${call.name} may not have been ` +
            `written; later writes run on the main thread`,
          { cause, transient: true },
        ),
      );
    }
  }

  #rejectWaiting(error: StoreError): void {
    for (const call of this.#waiting.values()) call.reject(error);
    this.#waiting.clear();
  }
}

/**
 * Starts the writer thread from the build (`dist/db/writer-thread.js`) or, running from the
 * TypeScript sources (vitest, tsx), from `writer-thread.ts`: Node 20 applies no module hooks
 * inside workers, so that thread registers tsx's CommonJS hook itself first.
 *
 * @example
 * ```ts
 * let worker: Worker | undefined;
 * const writer = new ThreadWriter(path, 5000, fallback, WAL_LIMIT, (data, port) =>
 *   (worker = startWriterThread(data, port)),
 * );
 * ```
 */
export function startWriterThread(workerData: WriterThreadData, port: MessagePort): Worker {
  const options = { workerData, transferList: [port] };
  const built = new URL('./writer-thread.js', import.meta.url);
  if (existsSync(fileURLToPath(built))) return startWorker(built, options);
  const source = fileURLToPath(new URL('./writer-thread.ts', import.meta.url));
  const tsx = createRequire(import.meta.url).resolve('tsx/cjs/api');
  const boot = `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(source)});`;
  return startWorker(boot, { ...options, eval: true });
}
