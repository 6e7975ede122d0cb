import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { StoreError } from '../../src/errors.js';
import { assertColloquyFile } from './colloquy-file.js';
import { type SqliteDurability, configureConnection } from './pragmas.js';

/**
 * How to open a colloquy SQLite database.
 *
 * @example
 * ```ts
 * const options: SqliteStoreOptions = { path: './colloquy.db', busyTimeoutMs: 10_000 };
 * ```
 */
export interface SqliteStoreOptions {
  /** File path, or `:memory:` for a private in-memory database. */
  path: string;
  /** How long a write waits for another writer (another process) before failing. Default 5000. */
  busyTimeoutMs?: number;
  /** Open without writing: no migrations, no WAL switch; writes fail with a StoreError. */
  readonly?: boolean;
  /**
   * Commit capture's batches (`commit`) on a thread of their own with a second connection, so
   * the event loop goes on while SQLite writes. A bot's default store has it; a file only.
   */
  writerThread?: boolean;
  /** How a commit reaches the disk (see `SqliteDurability`). Default `'full'`. */
  durability?: SqliteDurability;
}

const MIGRATIONS_TABLE = '__drizzle_migrations';

/**
 * The committed drizzle-kit migrations. From source this file sits in `db/sqlite/`, next to
 * `db/sqlite/migrations`; from the build it sits in `dist/db/sqlite/`, and the package ships
 * `db/sqlite/migrations` at its root.
 *
 * @example
 * ```ts
 * migrationsFolder(); // '/…/node_modules/colloquy/db/sqlite/migrations'
 * ```
 */
export function migrationsFolder(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [resolve(here, 'migrations'), resolve(here, '../../../db/sqlite/migrations')];
  const found = candidates.find((dir) => existsSync(resolve(dir, 'meta/_journal.json')));
  if (found === undefined) {
    throw new StoreError(`colloquy's migrations are missing (looked in ${candidates.join(', ')})`);
  }
  return found;
}

interface Journal {
  entries: { tag: string; when: number }[];
}

function readJournal(folder: string): Journal {
  return JSON.parse(readFileSync(resolve(folder, 'meta/_journal.json'), 'utf8')) as Journal;
}

/** The newest migration this code knows, as drizzle records it (`created_at` = journal `when`). */
function newestKnownMigration(folder: string): number {
  return Math.max(0, ...readJournal(folder).entries.map((entry) => entry.when));
}

/** The newest migration applied to this file, or 0 for a database colloquy never touched. */
function newestAppliedMigration(db: Database.Database): number {
  const table = db
    .prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`)
    .get(MIGRATIONS_TABLE);
  if (table === undefined) return 0;
  const row = db.prepare(`SELECT max(created_at) AS newest FROM ${MIGRATIONS_TABLE}`).get() as {
    newest: number | null;
  };
  return Number(row.newest ?? 0);
}

/**
 * Opens the file, sets the pragmas colloquy relies on and brings the schema up to date.
 * Throws a StoreError (with `cause`) for a missing directory, a file that is not a SQLite
 * database, or a database written by a newer colloquy.
 *
 * @example
 * ```ts
 * const db = openDatabase({ path: './colloquy.db' });
 * ```
 */
export function openDatabase(options: SqliteStoreOptions): Database.Database {
  const { path, busyTimeoutMs = 5000, readonly = false, durability = 'full' } = options;
  if (durability !== 'full' && durability !== 'normal') {
    throw new StoreError(
      `durability must be 'full' or 'normal', not ${JSON.stringify(durability)}`,
      { transient: false },
    );
  }
  let db: Database.Database;
  try {
    if (path !== ':memory:' && path !== '' && !existsSync(dirname(resolve(path)))) {
      throw new Error(`directory ${dirname(resolve(path))} does not exist`);
    }
    if (
      path !== ':memory:' &&
      path !== '' &&
      statSync(path, { throwIfNoEntry: false })?.isDirectory()
    ) {
      throw new Error('it is a directory, not a database file');
    }
    db = new Database(path, { readonly, fileMustExist: readonly, timeout: busyTimeoutMs });
  } catch (error) {
    throw new StoreError(`cannot open the colloquy database at ${path}: ${describe(error)}`, {
      cause: error,
    });
  }
  try {
    const folder = migrationsFolder();
    assertColloquyFile(db, path, {
      migrationsTable: MIGRATIONS_TABLE,
      firstMigration: readJournal(folder).entries[0]?.when ?? 0,
    });
    configureConnection(db, { busyTimeoutMs, readonly, durability });
    bringSchemaUpToDate(db, path, readonly);
    if (!readonly && path !== ':memory:' && path !== '') assertWritable(db, path);
    return db;
  } catch (error) {
    db.close();
    if (error instanceof StoreError) throw error;
    const notADatabase = (error as { code?: string }).code === 'SQLITE_NOTADB';
    throw new StoreError(
      notADatabase
        ? `${path} is not a SQLite database (colloquy stores conversations in SQLite files)`
        : `cannot open the colloquy database at ${path}: ${describe(error)}`,
      { cause: error },
    );
  }
}

function bringSchemaUpToDate(db: Database.Database, path: string, readonly: boolean): void {
  const folder = migrationsFolder();
  const known = newestKnownMigration(folder);
  // Several processes may open a fresh file at once. drizzle's migrator reads what is applied
  // before it takes the write lock, so the loser of that race fails on "already exists";
  // it then finds the schema current and carries on.
  for (let attempt = 1; ; attempt++) {
    const applied = newestAppliedMigration(db);
    if (applied > known) {
      throw new StoreError(
        `${path} was written by a newer version of colloquy (its schema has migrations this ` +
          `version does not know); upgrade colloquy to open it`,
      );
    }
    if (applied === known) return;
    if (readonly) {
      throw new StoreError(
        applied === 0
          ? `${path} is an empty database (no colloquy schema yet); open it once without readonly to create the schema`
          : `${path} uses an older colloquy schema; open it once without readonly to migrate it`,
      );
    }
    try {
      migrateWithoutForeignKeys(db, folder);
      return;
    } catch (error) {
      if (newestAppliedMigration(db) === known) return;
      if (attempt >= 3) {
        throw new StoreError(`could not migrate ${path}: ${describe(error)}`, { cause: error });
      }
    }
  }
}

/**
 * Runs the pending migrations with foreign keys off, as SQLite asks for rebuilding a table:
 * dropping the old table would otherwise delete the rows that reference it. The migrations
 * run in one transaction, where the pragma cannot change, so it is set around them.
 */
function migrateWithoutForeignKeys(db: Database.Database, folder: string): void {
  db.pragma('foreign_keys = OFF');
  try {
    migrate(drizzle(db), { migrationsFolder: folder, migrationsTable: MIGRATIONS_TABLE });
  } finally {
    db.pragma('foreign_keys = ON');
  }
}

/**
 * Commits one write that changes nothing, so a file the process cannot write (a read-only
 * file or `-shm`, another owner, a read-only folder) is refused when the store opens, not
 * found out turn by turn.
 */
function assertWritable(db: Database.Database, path: string): void {
  try {
    db.transaction(() => {
      db.prepare(
        `UPDATE ${MIGRATIONS_TABLE} SET hash = hash WHERE id = (SELECT max(id) FROM ${MIGRATIONS_TABLE})`,
      ).run();
    }).immediate();
  } catch (error) {
    throw new StoreError(
      `cannot write the colloquy database at ${path} (${describe(error)}); check the ` +
        `permissions and owner of the file, its -wal and -shm files and its folder`,
      { cause: error, transient: false },
    );
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
