import type { MessagePort } from 'node:worker_threads';
import type { WriteName } from './writes.js';

/** What the store hands the writer thread when it starts it. */
export interface WriterThreadData {
  path: string;
  busyTimeoutMs: number;
  /** Past this WAL size the thread restarts the WAL between batches (see `WAL_LIMIT`). */
  walLimitBytes: number;
  /** The thread's end of the channel the calls and answers cross. */
  port: MessagePort;
  /** Two `Int32` slots shared with the store: see {@link Doorbell}. */
  bell: SharedArrayBuffer;
}

/**
 * How the store wakes its writer thread. The thread does not sleep in its event loop (a
 * message posted there would wake it, at a cost to the poster): it waits on `rings` with
 * `Atomics.wait`, looks at its port every {@link POLL_MS} while calls keep coming, and takes
 * everything that arrived as one batch. The store bumps `rings` and notifies only when someone
 * waits for a call (`run`, `flush`, `close`), or when the thread has found nothing for a while
 * and sleeps until rung (`asleep` is 1).
 *
 * @example
 * ```ts
 * Atomics.add(bell, Doorbell.rings, 1);
 * Atomics.notify(bell, Doorbell.rings);
 * ```
 */
export const Doorbell = { rings: 0, asleep: 1 } as const;

/** How often the thread looks at its port while calls keep coming, ms. */
export const POLL_MS = 25;

/** After this long with nothing to do, the thread sleeps until rung, ms. */
export const SLEEP_AFTER_MS = 1000;

/** One write call. */
export interface Call {
  id: number;
  name: WriteName;
  args: unknown[];
}

/**
 * What crosses to the thread in one message: the calls made during one turn of the event
 * loop, in order, possibly ending with `close` (finish what came before, close, end).
 */
export type Request = (Call | { close: true })[];

/** The answer to one call. */
export type Answer = { id: number; value: unknown } | { id: number; error: SerializedError };

/** What survives of an error crossing threads: enough for the store to explain it. */
export interface SerializedError {
  name: string;
  message: string;
  code?: string;
}

/** The thread's messages: opened (or could not), then the answers of each batch, in order. */
export type Reply = { ready: true } | { failed: SerializedError } | Answer[];

/**
 * An error as it crosses a thread: name, message and SQLite's `code` (structured clone would
 * drop the code and turn every subclass into a plain Error).
 *
 * @example
 * ```ts
 * port.postMessage({ id, error: serializeError(error) });
 * ```
 */
export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string'
    ? { name: error.name, message: error.message, code }
    : { name: error.name, message: error.message };
}

/**
 * An error from the thread as the store's guard expects it: same name, message and code.
 *
 * @example
 * ```ts
 * waiting.reject(revive(reply.error));
 * ```
 */
export function revive(serialized: SerializedError): Error {
  const { name, message, code } = serialized;
  const error =
    name === 'TypeError'
      ? new TypeError(message)
      : name === 'RangeError'
        ? new RangeError(message)
        : new Error(message);
  if (name !== error.name) error.name = name;
  if (code !== undefined) Object.assign(error, { code });
  return error;
}
