import { Worker, type WorkerOptions } from 'node:worker_threads';

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
 * `new Worker` with {@link threadExecArgv}. Node refuses to pass some of the process's own
 * options to a thread (`--perf-basic-prof`, `--title`…: ERR_WORKER_INVALID_EXEC_ARGV), though a
 * thread started without `execArgv` inherits them silently; those it names are left out.
 *
 * @example
 * ```ts
 * const worker = startWorker(new URL('./thread.js', import.meta.url), { workerData });
 * ```
 */
export function startWorker(
  target: string | URL,
  options: Omit<WorkerOptions, 'execArgv'>,
  execArgv = threadExecArgv(),
): Worker {
  try {
    return new Worker(target, { ...options, execArgv });
  } catch (error) {
    const refused = invalidFlags(error);
    if (refused.length === 0) throw error;
    const kept = execArgv.filter((arg) => !refused.includes(arg));
    return new Worker(target, { ...options, execArgv: kept });
  }
}

/** The options named by an ERR_WORKER_INVALID_EXEC_ARGV error ("…flags: --a, --b=1"). */
function invalidFlags(error: unknown): string[] {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code !== 'ERR_WORKER_INVALID_EXEC_ARGV' || typeof message !== 'string') return [];
  const list = message.slice(message.lastIndexOf(': ') + 2);
  return list.split(', ').filter((flag) => flag.startsWith('-'));
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
