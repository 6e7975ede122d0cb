import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { StoreError } from '../../src/errors.js';

/**
 * How to reach a colloquy Postgres database.
 *
 * @example
 * ```ts
 * const options: PostgresStoreOptions = { connectionString: 'postgres://bot@db/colloquy' };
 * ```
 */
export interface PostgresStoreOptions {
  /** A `postgres://` URL (libpq's `PG*` variables fill in what it leaves out). */
  connectionString?: string;
  /** Most connections the store opens at once (default 10). */
  max?: number;
  /** Open without writing: no migrations, every transaction read-only. */
  readonly?: boolean;
}

const MIGRATIONS_TABLE = '__drizzle_migrations';
/** The advisory lock instances take around migrations (any fixed number; this spells "colq"). */
const MIGRATION_LOCK = 0x636f6c71;

/**
 * The Postgres migrations drizzle-kit generated (db/postgres/migrations). From source this file
 * sits beside them; from the build it sits in `dist/db/postgres/`, and the package ships
 * `db/postgres/migrations` at its root.
 *
 * @example
 * ```ts
 * postgresMigrationsFolder(); // '/…/node_modules/colloquy/db/postgres/migrations'
 * ```
 */
export function postgresMigrationsFolder(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    resolve(here, 'migrations'),
    resolve(here, '../../../db/postgres/migrations'),
  ];
  const found = candidates.find((dir) => existsSync(resolve(dir, 'meta/_journal.json')));
  if (found === undefined) {
    throw new StoreError(
      `colloquy's Postgres migrations are missing (looked in ${candidates.join(', ')})`,
    );
  }
  return found;
}

/** `2026-01-01 09:30:00.12+00` (a timestamptz in a UTC session) as colloquy writes times. */
const PG_UTC = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d+)?\+00$/;

/** A timestamptz as ISO 8601 UTC with milliseconds, the form every store answers. */
export function isoFromPostgres(text: string): string {
  const match = PG_UTC.exec(text);
  if (match === null) return new Date(text).toISOString();
  const fraction = (match[3] ?? '.').padEnd(4, '0').slice(0, 4);
  return `${match[1]}T${match[2]}${fraction}Z`;
}

const raw = (text: string) => text;
/**
 * How values come back: `bigint` as a number (sequences stay far below 2^53), timestamps as
 * ISO strings, JSON as its text (the row mapping shared with SQLite parses it).
 */
const PARSERS: Record<number, (text: string) => unknown> = {
  20: Number,
  114: raw,
  1184: isoFromPostgres,
  3802: raw,
};

/**
 * A connection pool for the store: a UTC session, colloquy's type parsers, and a name in
 * `pg_stat_activity`.
 *
 * @example
 * ```ts
 * const pool = openPool({ connectionString: 'postgres://postgres@127.0.0.1/colloquy' });
 * ```
 */
export function openPool(options: PostgresStoreOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    application_name: 'colloquy',
    options: `-c TimeZone=UTC${options.readonly === true ? ' -c default_transaction_read_only=on' : ''}`,
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        PARSERS[oid] ??
        pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle connection that breaks (a restarted server) is dropped by the pool; without a
  // listener its error would end the process.
  pool.on('error', () => {});
  return pool;
}

/**
 * Runs `fn` on one connection of the pool, returned to it after. A held connection that
 * breaks emits an error event as well as failing its query: listened to here so that it
 * cannot end the process, and the broken connection is dropped instead of returned. `fn`
 * calls `discard` when it leaves the connection in an unknown state.
 *
 * @example
 * ```ts
 * const rows = await withClient(pool, async (client) => (await client.query('SELECT 1')).rows);
 * ```
 */
export async function withClient<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient, discard: () => void) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | boolean = false;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    return await fn(client, () => (broken ||= true));
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/**
 * Brings the schema up to date under an advisory lock, so instances starting together apply
 * each migration once. A database written by a newer colloquy is refused.
 *
 * @example
 * ```ts
 * await migratePostgres(pool, 'postgres://…');
 * ```
 */
export async function migratePostgres(pool: pg.Pool, where: string): Promise<string[]> {
  const folder = postgresMigrationsFolder();
  const entries = readJournal(folder).entries;
  const known = Math.max(0, ...entries.map((entry) => entry.when));
  return withClient(pool, async (client) => {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      const applied = await newestApplied(client);
      if (applied > known) {
        throw new StoreError(
          `${where} was written by a newer version of colloquy (its schema has migrations this ` +
            `version does not know); upgrade colloquy to open it`,
          { transient: false },
        );
      }
      if (applied === known) return [];
      await migrate(drizzle(client), {
        migrationsFolder: folder,
        migrationsTable: MIGRATIONS_TABLE,
        migrationsSchema: 'public',
      });
      return entries.filter((entry) => entry.when > applied).map((entry) => entry.tag);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  });
}

/**
 * Brings the database at `url` up to this colloquy's schema and answers the migrations it
 * applied (what `colloquy migrate` prints).
 *
 * @example
 * ```ts
 * await migratePostgresDatabase('postgres://postgres@127.0.0.1/colloquy'); // ['0003_notify_turns']
 * ```
 */
export async function migratePostgresDatabase(url: string): Promise<string[]> {
  const pool = openPool({ connectionString: url, max: 1 });
  try {
    return await migratePostgres(pool, redactUrl(url));
  } finally {
    await pool.end();
  }
}

/** Whether every migration this colloquy knows is applied (a read-only open needs it). */
export async function isCurrent(pool: pg.Pool): Promise<boolean> {
  const folder = postgresMigrationsFolder();
  const known = Math.max(0, ...readJournal(folder).entries.map((entry) => entry.when));
  return withClient(pool, async (client) => (await newestApplied(client)) === known);
}

/** The newest migration applied, or 0 for a database colloquy never touched. */
async function newestApplied(client: pg.PoolClient): Promise<number> {
  const table = `public.${MIGRATIONS_TABLE}`;
  const { rows } = await client.query<{ present: boolean }>(
    'SELECT to_regclass($1) IS NOT NULL AS present',
    [table],
  );
  if (rows[0]?.present !== true) return 0;
  const newest = await client.query<{ newest: string | null }>(
    `SELECT max(created_at)::text AS newest FROM ${table}`,
  );
  return Number(newest.rows[0]?.newest ?? 0);
}

interface Journal {
  entries: { tag: string; when: number }[];
}

function readJournal(folder: string): Journal {
  return JSON.parse(readFileSync(resolve(folder, 'meta/_journal.json'), 'utf8')) as Journal;
}

/**
 * A URL with its password masked, for messages and logs.
 *
 * @example
 * ```ts
 * redactUrl('postgres://bot:secret@db/colloquy'); // 'postgres://bot:***@db/colloquy'
 * ```
 */
export function redactUrl(url: string | undefined): string {
  if (url === undefined || url === '') return 'the Postgres database (PG* variables)';
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the Postgres database (an unparseable URL)';
  }
}
