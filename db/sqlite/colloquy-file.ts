import type Database from 'better-sqlite3';
import { StoreError } from '../../src/errors.js';

/**
 * Refuses a SQLite file that holds another application's tables, before colloquy changes
 * anything in it (migrations, the switch to WAL). A colloquy file records colloquy's first
 * migration in `migrationsTable`; a file with no tables at all is a new one.
 *
 * @example
 * ```ts
 * assertColloquyFile(db, './notes.db', { migrationsTable: '__drizzle_migrations', firstMigration: 1795272214372 });
 * ```
 */
export function assertColloquyFile(
  db: Database.Database,
  path: string,
  colloquy: { migrationsTable: string; firstMigration: number },
): void {
  const tables = db
    .prepare<[], { name: string }>(
      `SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name`,
    )
    .all()
    .map((row) => row.name);
  const own = tables.filter((name) => name !== colloquy.migrationsTable);
  if (own.length === 0) return;
  if (tables.includes(colloquy.migrationsTable)) {
    const first = db
      .prepare(`SELECT 1 FROM "${colloquy.migrationsTable}" WHERE created_at = ?`)
      .get(colloquy.firstMigration);
    if (first !== undefined) return;
  }
  const shown = own.slice(0, 3).join(', ') + (own.length > 3 ? ', …' : '');
  throw new StoreError(
    `${path} is not a colloquy database (it holds another application's tables: ${shown}); ` +
      `point COLLOQUY_DB at a new file`,
  );
}
