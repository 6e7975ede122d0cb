import { isPostgresUrl, resolveDbPath } from '../db-path.js';
import type { ConversationStore } from '../store.js';

/**
 * Where the bot keeps conversations when it is given no store: `COLLOQUY_DB` (trimmed; blank
 * counts as unset), else `./colloquy.db`, the same rule as the CLI's.
 *
 * @example
 * ```ts
 * const store = SqliteConversationStore.open(defaultDbPath());
 * ```
 */
export function defaultDbPath(env: Record<string, string | undefined> = process.env): string {
  return resolveDbPath(undefined, env);
}

/**
 * Opens the store `COLLOQUY_DB` names: a `postgres://` URL opens the Postgres store, anything
 * else the SQLite file (default `./colloquy.db`). Loaded lazily through the public names, so a
 * bot given another store never loads better-sqlite3 or pg.
 */
export async function openDefaultStore(path = defaultDbPath()): Promise<ConversationStore> {
  if (isPostgresUrl(path)) {
    const { PostgresConversationStore } = await import('colloquy/postgres');
    return PostgresConversationStore.open({ connectionString: path });
  }
  const { SqliteConversationStore } = await import('colloquy/sqlite');
  const store = SqliteConversationStore.open({ path, writerThread: true });
  await store.ready();
  return store;
}
