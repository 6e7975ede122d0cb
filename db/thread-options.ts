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
