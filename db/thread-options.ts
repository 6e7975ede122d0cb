/**
 * Node options for the store's worker threads: the process's own, minus `--input-type`, which
 * a thread inherits by default and which makes Node refuse to load a thread from a file (and
 * run a thread's evaluated source as an ES module) when the program itself was started with
 * `node --input-type=module -e …`.
 *
 * @example
 * ```ts
 * new Worker(url, { execArgv: threadExecArgv() });
 * ```
 */
export function threadExecArgv(): string[] {
  return process.execArgv.filter((arg) => !arg.startsWith('--input-type'));
}

/**
 * The WAL size past which a checkpoint also restarts the log. Under writes that never pause
 * a PASSIVE checkpoint never quite catches up with the writer, so SQLite never starts the WAL
 * over and the file grows without bound (8 GiB over the bench's 1M-turn fill). Past this size
 * the checkpoint worker runs a TRUNCATE checkpoint: writers wait while the rest is copied back,
 * and the WAL starts again from empty. A writer that never pauses can outlast the worker's 1 s
 * busy timeout, so the writer thread checks too, between batches, and restarts the WAL itself
 * (it waits on its own thread, never on the event loop).
 */
export const WAL_LIMIT = 64 * 1024 * 1024;
