import { CommanderError } from 'commander';
import { createProgram } from './program.js';
import { reportError } from './errors.js';

/**
 * Runs the CLI with these arguments (`process.argv` shape) and returns the exit code:
 * 0 on success, 2 for a wrong command line, 1 for anything that failed at run time.
 *
 * @example
 * ```ts
 * process.exitCode = await run(process.argv);
 * ```
 */
export async function run(argv: readonly string[]): Promise<number> {
  const program = createProgram();
  try {
    await program.parseAsync([...argv]);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has already printed help, the version or its own one-line error.
      return error.exitCode === 0 ? 0 : 2;
    }
    return reportError(error);
  }
}
