import type { Command } from 'commander';
import { resolveDbPath } from '../default-store.js';

/** The options every command shares (declared on the program). */
export interface GlobalOptions {
  db?: string;
}

/** The database path for a command: its `--db`, else `COLLOQUY_DB`, else the default. */
export function dbPathOf(command: Command): string {
  return resolveDbPath(command.optsWithGlobals<GlobalOptions>().db);
}

/** Writes text to stdout. */
export function print(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** Writes a note to stderr (progress, counts, hints: anything that is not the answer). */
export function note(text: string): void {
  process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
}
