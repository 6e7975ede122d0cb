import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type Database from 'better-sqlite3';

const CREATE_VIEW = /CREATE\s+VIEW\s+(?:IF\s+NOT\s+EXISTS\s+)?[`"[]?(\w+)/i;
const DROP_VIEW = /DROP\s+VIEW\s+(?:IF\s+EXISTS\s+)?[`"[]?(\w+)/i;

/**
 * The views the migrations leave behind, each with the statement that last created it: the
 * migrations are read in order, a `CREATE VIEW` replaces an earlier one and a `DROP VIEW`
 * removes it.
 *
 * @example
 * ```ts
 * viewsOfMigrations(migrationsFolder(), ['0000_init', '0001_views']).get('transcript');
 * ```
 */
export function viewsOfMigrations(folder: string, tags: readonly string[]): Map<string, string> {
  const views = new Map<string, string>();
  for (const tag of tags) {
    const sql = readFileSync(resolve(folder, `${tag}.sql`), 'utf8');
    for (const piece of sql.split('--> statement-breakpoint')) {
      const statement = piece.trim();
      const dropped = DROP_VIEW.exec(statement)?.[1];
      const created = CREATE_VIEW.exec(statement)?.[1];
      if (dropped !== undefined) views.delete(dropped);
      if (created !== undefined) views.set(created, statement);
    }
  }
  return views;
}

/**
 * Creates again every view of the schema that is missing from the file (dropped by hand, say)
 * and returns their names. The tables are left alone.
 *
 * @example
 * ```ts
 * restoreViews(db, viewsOfMigrations(folder, tags)); // ['transcript']
 * ```
 */
export function restoreViews(db: Database.Database, views: Map<string, string>): string[] {
  const present = new Set(
    db
      .prepare<[], { name: string }>(`SELECT name FROM sqlite_master WHERE type = 'view'`)
      .all()
      .map((row) => row.name),
  );
  const missing = [...views.keys()].filter((name) => !present.has(name));
  db.transaction(() => {
    for (const name of missing) db.exec(views.get(name) ?? '');
  })();
  return missing;
}
