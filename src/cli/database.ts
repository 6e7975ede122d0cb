import { existsSync, statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { CliError } from './errors.js';

/** Fails with the one-line hint when there is no database file; the CLI never creates one. */
export function assertDatabaseExists(path: string): void {
  if (!existsSync(path)) {
    throw new CliError(`no database at ${path} — start a bot first or pass --db / COLLOQUY_DB`);
  }
  if (!statSync(path).isFile()) throw new CliError(`${path} is not a database file`);
}

/**
 * Opens the colloquy store on an existing file (never creating one). Opening is what checks
 * the schema: a database written by a newer colloquy, or a file that is not a colloquy
 * database, fails here with the store's own message. Read-only unless `write` is set.
 *
 * @example
 * ```ts
 * const store = await openStore('./colloquy.db', { write: true });
 * try { await store.forgetParticipant('telegram:1001'); } finally { await store.close(); }
 * ```
 */
export async function openStore(path: string, options: { write?: boolean } = {}) {
  assertDatabaseExists(path);
  const { SqliteConversationStore } = await import('colloquy/sqlite');
  try {
    return new SqliteConversationStore({ path, readonly: !options.write });
  } catch (error) {
    throw describeOpenFailure(path, error);
  }
}

/**
 * A raw SQL connection to an existing database, after the store has checked its schema:
 * read-only unless `write` is set (then foreign keys cascade as the store expects). The
 * caller closes it.
 *
 * @example
 * ```ts
 * const db = await openSql('./colloquy.db');
 * try { console.log(db.prepare('select count(*) as n from messages').get()); } finally { db.close(); }
 * ```
 */
export async function openSql(
  path: string,
  options: { write?: boolean } = {},
): Promise<Database.Database> {
  const store = await openStore(path, options);
  return store.db;
}

function describeOpenFailure(path: string, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  if (/older colloquy schema/.test(message)) {
    return new CliError(
      `${path} uses an older colloquy schema; run "colloquy migrate" (or start the bot) to upgrade it`,
      { cause: error },
    );
  }
  return error instanceof Error ? error : new CliError(message, { cause: error });
}
