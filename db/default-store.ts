import { homedir } from 'node:os';
import { join } from 'node:path';
import type { DefaultStore } from '../src/bot.js';

/** The SQLite file colloquy uses when neither `--db` nor `COLLOQUY_DB` names one. */
export const DEFAULT_DB_PATH = './colloquy.db';

/**
 * The SQLite file to use, for the bot and the CLI alike: `given` (the CLI's `--db`), else
 * `COLLOQUY_DB`, else `./colloquy.db`. Each value is trimmed, and a blank one counts as unset,
 * so `COLLOQUY_DB=' bot.db '` means `bot.db` and `COLLOQUY_DB='  '` means the default. A
 * leading `~` means the home folder, as in a shell (a `.env` file or `--db=~/x.db` passes it
 * through unexpanded).
 *
 * @example
 * ```ts
 * resolveDbPath(undefined, { COLLOQUY_DB: ' /var/lib/bot.db ' }); // '/var/lib/bot.db'
 * resolveDbPath('other.db', { COLLOQUY_DB: '/var/lib/bot.db' }); // 'other.db'
 * resolveDbPath('~/bots/x.db'); // '/home/ada/bots/x.db'
 * ```
 */
export function resolveDbPath(
  given: string | undefined,
  env: Record<string, string | undefined> = process.env,
): string {
  const value = given?.trim() || env.COLLOQUY_DB?.trim() || DEFAULT_DB_PATH;
  return isPostgresUrl(value) ? value : expandHome(value);
}

/**
 * Whether a `--db` / `COLLOQUY_DB` value names a Postgres database rather than a SQLite file.
 *
 * @example
 * ```ts
 * isPostgresUrl('postgres://bot@db/colloquy'); // true
 * isPostgresUrl('./colloquy.db'); // false
 * ```
 */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value.trim());
}

function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}

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
 * Opens the store `COLLOQUY_DB` names for a bot given none: a `postgres://` URL opens the
 * Postgres store (shared by default: several instances may use it), anything else the SQLite
 * file (default `./colloquy.db`). Loaded lazily, so a bot given another store never loads
 * better-sqlite3 or pg.
 *
 * @example
 * ```ts
 * const { store, shared } = await openDefaultStore();
 * ```
 */
export async function openDefaultStore(path = defaultDbPath()): Promise<DefaultStore> {
  if (isPostgresUrl(path)) {
    const { PostgresConversationStore } = await import('./postgres/index.js');
    return {
      store: await PostgresConversationStore.open({ connectionString: path }),
      shared: true,
    };
  }
  const { SqliteConversationStore } = await import('./sqlite/index.js');
  const store = SqliteConversationStore.open({ path, writerThread: true });
  await store.ready();
  return { store, shared: false };
}
