import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import Database from 'better-sqlite3';
import { migrationsFolder, openDatabase } from './connection.js';
import { restoreViews, viewsOfMigrations } from './views.js';

/** What `migrateDatabase` changed. */
export interface MigrationReport {
  /** The migrations applied now, by tag (`0006_search_indexed_per_batch`), oldest first. */
  applied: string[];
  /** The views that were missing and were created again (`transcript`). */
  restoredViews: string[];
}

/**
 * Brings an existing colloquy file up to this version's schema, as a bot does when it opens
 * the file, and restores any view that was dropped; says what it did. Refuses what the
 * store refuses (a file that is not a colloquy database, one from a newer colloquy).
 *
 * @example
 * ```ts
 * const { applied, restoredViews } = migrateDatabase('./colloquy.db');
 * ```
 */
export function migrateDatabase(path: string): MigrationReport {
  const folder = migrationsFolder();
  const journal = JSON.parse(readFileSync(resolve(folder, 'meta/_journal.json'), 'utf8')) as {
    entries: { tag: string; when: number }[];
  };
  const before = appliedMigrations(path);
  const db = openDatabase({ path });
  try {
    const after = appliedMigrations(db);
    const applied = journal.entries
      .filter((entry) => after.has(entry.when) && !before.has(entry.when))
      .map((entry) => entry.tag);
    const views = viewsOfMigrations(
      folder,
      journal.entries.map((entry) => entry.tag),
    );
    return { applied, restoredViews: restoreViews(db, views) };
  } finally {
    db.close();
  }
}

/** The `created_at` of every migration recorded in the file (none when it cannot be read). */
function appliedMigrations(file: string | Database.Database): Set<number> {
  let db: Database.Database | undefined;
  try {
    db =
      typeof file === 'string' ? new Database(file, { readonly: true, fileMustExist: true }) : file;
    const rows = db
      .prepare<[], { created_at: number }>('SELECT created_at FROM __drizzle_migrations')
      .all();
    return new Set(rows.map((row) => Number(row.created_at)));
  } catch {
    return new Set();
  } finally {
    if (typeof file === 'string') db?.close();
  }
}
