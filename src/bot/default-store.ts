import { resolveDbPath } from '../db-path.js';
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
 * Opens the SQLite store at `COLLOQUY_DB` (default `./colloquy.db`). Loaded lazily through
 * the public name, so a bot given another store never loads better-sqlite3.
 */
export async function openDefaultStore(path = defaultDbPath()): Promise<ConversationStore> {
  const { SqliteConversationStore } = await import('colloquy/sqlite');
  const store = SqliteConversationStore.open({ path, writerThread: true });
  await store.ready();
  return store;
}
