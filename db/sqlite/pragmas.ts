import type Database from 'better-sqlite3';

/**
 * How a commit reaches the disk. `full` (the default) syncs the WAL at every commit, so a
 * turn acknowledged to its platform survives a power loss or an operating-system crash, not
 * only a crash of the process; `normal` syncs only at checkpoints, so the last commits before
 * such a crash can be lost (a process crash loses nothing either way).
 */
export type SqliteDurability = 'full' | 'normal';

/**
 * The settings colloquy relies on, per connection: wait for other writers, enforce foreign
 * keys and, for writing, WAL with `synchronous` as `durability` says, `secure_delete` (deleted
 * rows are overwritten with zeros, so forgotten text leaves no readable trace in free pages;
 * appends cost no more, they free nothing) and `temp_store = MEMORY`: the journal of a
 * savepoint (one per op of a batch) or of a statement stays in memory instead of a temporary
 * file.
 *
 * @example
 * ```ts
 * configureConnection(db, { busyTimeoutMs: 5000, readonly: false, durability: 'full' });
 * ```
 */
export function configureConnection(
  db: Database.Database,
  options: { busyTimeoutMs: number; readonly: boolean; durability: SqliteDurability },
): void {
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs))}`);
  db.pragma('foreign_keys = ON');
  if (options.readonly) return;
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.durability === 'normal' ? 'NORMAL' : 'FULL'}`);
  db.pragma('secure_delete = ON');
  db.pragma('temp_store = MEMORY');
}
