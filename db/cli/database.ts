import { existsSync, statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import type { PostgresConversationStore } from '../postgres/index.js';
import type { ConversationStore } from '../../src/store.js';
import type { StudioSource } from '../studio/source.js';
import { isPostgresUrl } from '../default-store.js';
import { CliError } from './errors.js';

/** Fails with the one-line hint when there is no database file; the CLI never creates one. */
export function assertDatabaseExists(path: string): void {
  if (isPostgresUrl(path)) return;
  if (!existsSync(path)) {
    throw new CliError(`no database at ${path} — start a bot first or pass --db / COLLOQUY_DB`);
  }
  if (!statSync(path).isFile()) throw new CliError(`${path} is not a database file`);
}

/**
 * Opens the colloquy store on an existing file (never creating one). Opening is what checks
 * the schema: a database written by a newer colloquy, or a file that is not a colloquy
 * database, fails here with the store's own message. Read-only unless `write` is set.
 *
 * @example
 * ```ts
 * const store = await openStore('./colloquy.db', { write: true });
 * try { await store.forgetParticipant('telegram:1001'); } finally { await store.close(); }
 * ```
 */
export async function openStore(
  path: string,
  options: { write?: boolean } = {},
): Promise<ConversationStore & Required<Pick<ConversationStore, 'commit' | 'close'>>> {
  if (isPostgresUrl(path)) return (await openPostgres(path, options)).store;
  return openSqliteStore(path, options);
}

async function openSqliteStore(path: string, options: { write?: boolean }) {
  assertDatabaseExists(path);
  const { SqliteConversationStore } = await import('../sqlite/index.js');
  try {
    return new SqliteConversationStore({ path, readonly: !options.write });
  } catch (error) {
    throw describeOpenFailure(path, error);
  }
}

/**
 * A raw SQL connection to an existing database, after the store has checked its schema:
 * read-only unless `write` is set (then foreign keys cascade as the store expects). The
 * caller closes it.
 *
 * @example
 * ```ts
 * const db = await openSql('./colloquy.db');
 * try { console.log(db.prepare('select count(*) as n from messages').get()); } finally { db.close(); }
 * ```
 */
export async function openSql(
  path: string,
  options: { write?: boolean } = {},
): Promise<Database.Database> {
  const store = await openSqliteStore(path, options);
  return store.db;
}

function describeOpenFailure(path: string, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  if (/is an empty database \(no colloquy schema yet\)/.test(message)) {
    return new CliError(
      `${path} is an empty database with no conversations yet; start a bot on it, or run "colloquy migrate" to create the schema`,
      { cause: error },
    );
  }
  if (/older colloquy schema/.test(message)) {
    return new CliError(
      `${path} uses an older colloquy schema; run "colloquy migrate" (or start the bot) to upgrade it`,
      { cause: error },
    );
  }
  // Postgres cannot tell an older schema from none: both lack the current migrations.
  if (/no current colloquy schema/.test(message)) {
    return new CliError(
      `${path} has no current colloquy schema (an older one, or none yet); run "colloquy migrate" (or start the bot) to bring it up to date`,
      { cause: error },
    );
  }
  return error instanceof Error ? error : new CliError(message, { cause: error });
}

/**
 * The database a command reads, in either dialect: SQL with `@name` parameters (written so
 * SQLite and Postgres both run it), rows as objects or as value arrays.
 *
 * @example
 * ```ts
 * const db = await openDb(dbPathOf(command));
 * try { await db.all('select count(*) as n from messages'); } finally { await db.close(); }
 * ```
 */
export interface CliDb {
  readonly dialect: 'sqlite' | 'postgres';
  /** The file or the URL (password masked). */
  readonly where: string;
  all<T>(sql: string, params?: Record<string, unknown>): Promise<T[]>;
  raw(sql: string, params?: Record<string, unknown>): Promise<unknown[][]>;
  /** The SQLite connection (undefined on Postgres). */
  readonly sqlite?: Database.Database;
  /** The Postgres store (undefined on SQLite), for what only it does. */
  readonly postgres?: PostgresConversationStore;
  close(): Promise<void>;
}

/**
 * Opens the database at `path` (a SQLite file, or a `postgres://` URL) for a command, read-only
 * unless `write` is set: a Postgres session then refuses every write itself.
 */
export async function openDb(path: string, options: { write?: boolean } = {}): Promise<CliDb> {
  if (isPostgresUrl(path)) {
    const { store, positional } = await openPostgres(path, options);
    const query = async (sql: string, params: Record<string, unknown>, rowMode?: 'array') => {
      const { text, values } = positional(sql, params);
      return (await store.pool.query({ text, values, ...(rowMode && { rowMode }) })).rows;
    };
    return {
      dialect: 'postgres',
      where: store.where,
      postgres: store,
      all: async <T>(sql: string, params = {}) => (await query(sql, params)) as T[],
      raw: async (sql, params = {}) => (await query(sql, params, 'array')) as unknown[][],
      close: () => store.close(),
    };
  }
  const db = await openSql(path, options);
  return {
    dialect: 'sqlite',
    where: path,
    sqlite: db,
    all: async <T>(sql: string, params = {}) => db.prepare(sql).all(params) as T[],
    raw: async (sql, params = {}) => db.prepare(sql).raw(true).all(params) as unknown[][],
    close: async () => void db.close(),
  };
}

async function openPostgres(url: string, options: { write?: boolean }) {
  const { PostgresConversationStore, positional, redactUrl } = await import('../postgres/index.js');
  try {
    const store = await PostgresConversationStore.open({
      connectionString: url,
      readonly: options.write !== true,
      max: 2,
    });
    return { store, positional };
  } catch (error) {
    throw describeOpenFailure(redactUrl(url), error);
  }
}

/**
 * What `colloquy studio` reads, on a SQLite file or a Postgres database, and where (the URL
 * with its password masked): read-only, `write` only enabling forget.
 */
export async function openStudioSource(
  path: string,
  options: { write?: boolean } = {},
): Promise<{ source: StudioSource; where: string }> {
  if (isPostgresUrl(path)) {
    const { PostgresStudioSource, redactUrl } = await import('../postgres/index.js');
    const where = redactUrl(path);
    try {
      return { source: await PostgresStudioSource.open(path, options), where };
    } catch (error) {
      throw describeOpenFailure(where, error);
    }
  }
  assertDatabaseExists(path);
  const { SqliteStudioSource } = await import('../sqlite/index.js');
  try {
    return { source: SqliteStudioSource.open(path, options), where: path };
  } catch (error) {
    throw describeOpenFailure(path, error);
  }
}
