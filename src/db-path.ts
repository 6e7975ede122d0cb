/** The SQLite file colloquy uses when neither `--db` nor `COLLOQUY_DB` names one. */
export const DEFAULT_DB_PATH = './colloquy.db';

/**
 * The SQLite file to use, for the bot and the CLI alike: `given` (the CLI's `--db`), else
 * `COLLOQUY_DB`, else `./colloquy.db`. Each value is trimmed, and a blank one counts as unset,
 * so `COLLOQUY_DB=' bot.db '` means `bot.db` and `COLLOQUY_DB='  '` means the default.
 *
 * @example
 * ```ts
 * resolveDbPath(undefined, { COLLOQUY_DB: ' /var/lib/bot.db ' }); // '/var/lib/bot.db'
 * resolveDbPath('other.db', { COLLOQUY_DB: '/var/lib/bot.db' }); // 'other.db'
 * ```
 */
export function resolveDbPath(
  given: string | undefined,
  env: Record<string, string | undefined> = process.env,
): string {
  return given?.trim() || env.COLLOQUY_DB?.trim() || DEFAULT_DB_PATH;
}
