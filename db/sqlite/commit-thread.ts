import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { StoreError } from '../../src/errors.js';
import type { CommitResult, StoreOperation } from '../../src/store.js';
import type { SqliteDurability } from './pragmas.js';

/** What the writer thread is started with. */
export interface WriterThreadData {
  path: string;
  busyTimeoutMs?: number;
  durability?: SqliteDurability;
}

/** A batch to commit, or the last message: close. */
export type WriterRequest =
  { id: number; ops: readonly StoreOperation[]; close?: undefined } | { close: true };

/** A `CommitResult` as it crosses the thread boundary (an error as its parts). */
type WireResult =
  | { ok: true; value: unknown }
  | { ok: false; error: { message: string; transient?: boolean; conversationId?: string } };

type WriterReply = { ready: true } | { id: number; results: WireResult[] };

/** A result made ready to post (a StoreError keeps its message and `transient`). */
export function toWire(result: CommitResult): WireResult {
  if (result.ok) return result;
  const { message, transient, conversationId } = result.error;
  return {
    ok: false,
    error: {
      message,
      ...(transient !== undefined && { transient }),
      ...(conversationId !== undefined && { conversationId }),
    },
  };
}

function fromWire(result: WireResult): CommitResult {
  if (result.ok) return result as CommitResult;
  const { message, ...rest } = result.error;
  return { ok: false, error: new StoreError(message, rest) };
}

/**
 * Commits a SQLite store's batches on a thread of their own, so the event loop goes on while
 * SQLite writes (see docs/benchmarks.md). Batches are committed in the order given. When the
 * thread dies, what it was given is answered with a transient error (capture tries it again)
 * and `alive` turns false: the store then commits on its own connection.
 *
 * @example
 * ```ts
 * const writer = new Writer({ path: './colloquy.db' });
 * const [result] = await writer.commit([{ kind: 'append', message: turn }]);
 * await writer.close();
 * ```
 */
export class Writer {
  alive = true;
  readonly #worker: Worker;
  readonly #waiting = new Map<
    number,
    { resolve: (results: CommitResult[]) => void; count: number }
  >();
  #next = 0;
  #closed: Promise<void> | undefined;
  /** Resolves once the thread has opened the file and takes batches (or has died). */
  readonly ready: Promise<void>;
  #ready!: () => void;

  constructor(data: WriterThreadData) {
    // Keeps the process up until it is ready, then only while a commit is under way.
    this.#worker = startWriterThread(data);
    this.ready = new Promise((resolve) => (this.#ready = resolve));
    this.#worker.on('message', (reply: WriterReply) => {
      if (!('id' in reply)) {
        if (this.#waiting.size === 0) this.#worker.unref();
        return this.#ready();
      }
      this.#waiting.get(reply.id)?.resolve(reply.results.map(fromWire));
      this.#waiting.delete(reply.id);
    });
    this.#worker.on('error', (error) => this.#fail(error));
    this.#worker.on('exit', () => this.#fail(new Error('the writer thread stopped')));
  }

  commit(ops: readonly StoreOperation[]): Promise<CommitResult[]> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#waiting.set(id, { resolve, count: ops.length });
      if (this.#waiting.size === 1) this.#worker.ref(); // a commit under way keeps the process up
      this.#worker.postMessage({ id, ops } satisfies WriterRequest);
    }).finally(() => {
      if (this.#waiting.size === 0 && this.alive) this.#worker.unref();
    }) as Promise<CommitResult[]>;
  }

  /** Finishes the batches given, then stops the thread. */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      if (!this.alive) return resolve();
      this.#worker.once('exit', () => resolve());
      this.#worker.postMessage({ close: true } satisfies WriterRequest);
      this.#worker.ref();
    });
    return this.#closed;
  }

  #fail(cause: unknown): void {
    if (!this.alive) return;
    this.alive = false;
    this.#ready();
    const error = new StoreError('the SQLite writer thread stopped', { cause, transient: true });
    for (const [id, { resolve, count }] of this.#waiting) {
      resolve(Array.from({ length: count }, () => ({ ok: false, error })));
      this.#waiting.delete(id);
    }
  }
}

/**
 * Starts the thread from the build (`dist/db/sqlite/commit-thread-worker.js`) or, from the TypeScript
 * sources (vitest, tsx), from `commit-thread-worker.ts`: Node 20 applies no module hooks inside
 * workers, so that thread registers tsx's CommonJS hook itself first.
 */
function startWriterThread(workerData: WriterThreadData): Worker {
  const built = new URL('./commit-thread-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(built))) return new Worker(built, { workerData });
  const source = fileURLToPath(new URL('./commit-thread-worker.ts', import.meta.url));
  const tsx = createRequire(import.meta.url).resolve('tsx/cjs/api');
  const boot = `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(source)});`;
  return new Worker(boot, { workerData, eval: true });
}
