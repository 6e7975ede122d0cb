import type { ConversationStore } from '../store.js';

/**
 * Where the bot keeps conversations when it is given no store: `COLLOQUY_DB`, else `./colloquy.db`.
 *
 * @example
 * ```ts
 * const store = SqliteConversationStore.open(defaultDbPath());
 * ```
 */
export function defaultDbPath(env: Record<string, string | undefined> = process.env): string {
  return env.COLLOQUY_DB?.trim() || './colloquy.db';
}

/**
 * Opens the SQLite store at `COLLOQUY_DB` (default `./colloquy.db`). Loaded lazily through
 * the public name, so a bot given another store never loads better-sqlite3.
 */
export async function openDefaultStore(path = defaultDbPath()): Promise<ConversationStore> {
  const { SqliteConversationStore } = await import('colloquy/sqlite');
  return SqliteConversationStore.open(path);
}
