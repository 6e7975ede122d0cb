import { messageOf, oneLine } from '../../src/errors.js';

/**
 * CLI failures: one line on stderr prefixed `colloquy: `, exit 2 for usage and 1 for
 * everything that went wrong at run time. `COLLOQUY_DEBUG=1` adds the stack and causes.
 *
 * @example
 * ```ts
 * throw new CliError('no conversation telegram:42');
 * throw new UsageError('pass either --json or --csv, not both');
 * ```
 */
export class CliError extends Error {
  override name = 'CliError';
  /** The process exit code this failure maps to. */
  readonly exitCode: number;

  constructor(message: string, options: { cause?: unknown; exitCode?: number } = {}) {
    super(message, { cause: options.cause });
    this.exitCode = options.exitCode ?? 1;
  }
}

/** The command line itself was wrong (exit code 2). */
export class UsageError extends CliError {
  override name = 'UsageError';

  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, exitCode: 2 });
  }
}

/** True when `COLLOQUY_DEBUG` asks for stack traces. */
export function debugEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.COLLOQUY_DEBUG;
  return value !== undefined && value !== '' && value !== '0' && value !== 'false';
}

/**
 * Writes one failure the way the CLI reports everything: a single `colloquy: …` line, or
 * with `COLLOQUY_DEBUG=1` the stack and every cause. Returns the exit code to use.
 */
export function reportError(
  error: unknown,
  stderr: NodeJS.WritableStream = process.stderr,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const exitCode = error instanceof CliError ? error.exitCode : 1;
  stderr.write(`colloquy: ${oneLine(messageOf(error))}\n`);
  if (debugEnabled(env)) {
    for (let e: unknown = error; e !== undefined; e = (e as { cause?: unknown }).cause) {
      stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      if (!(e instanceof Error)) break;
    }
  }
  return exitCode;
}
