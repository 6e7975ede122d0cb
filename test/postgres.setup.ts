import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { PostgresConversationStore, postgresMigrationsFolder } from '../db/postgres/index.js';

/** The server the Postgres suites use: `COLLOQUY_TEST_DATABASE_URL`, else libpq's `PG*`, else local. */
export function testServerUrl(): string {
  if (process.env.COLLOQUY_TEST_DATABASE_URL) return process.env.COLLOQUY_TEST_DATABASE_URL;
  if (process.env.PGHOST || process.env.PGDATABASE || process.env.PGUSER) return '';
  return 'postgres://postgres@127.0.0.1:5432/postgres';
}

/** The URL of another database on the same server. */
export function databaseUrl(server: string, database: string): string {
  if (server === '') return `postgres:///${database}`;
  const url = new URL(server);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Serializes making the template against making databases from it (any fixed number). */
export const TEMPLATE_LOCK = 0x636f7474;

/**
 * Makes sure a migrated template database for the current migrations exists, and answers its
 * name: one per migrations hash, so every test database is a cheap copy of it.
 */
export async function ensureTemplate(server: string): Promise<string> {
  const folder = postgresMigrationsFolder();
  const hash = createHash('sha256');
  for (const name of readdirSync(folder).sort()) {
    if (name.endsWith('.sql')) hash.update(readFileSync(join(folder, name)));
  }
  hash.update(readFileSync(join(folder, 'meta/_journal.json')));
  const template = `colloquy_template_${hash.digest('hex').slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: server || undefined });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      template,
    ]);
    if (rowCount === 0) {
      await admin.query(`CREATE DATABASE ${template}`);
      try {
        const store = await PostgresConversationStore.open(databaseUrl(server, template));
        await store.close();
      } catch (error) {
        await admin.query(`DROP DATABASE ${template}`);
        throw error;
      }
    }
  } finally {
    await admin.end();
  }
  return template;
}

/** Undefined when the server answers, else what went wrong. */
export async function pingPostgres(server: string): Promise<string | undefined> {
  const client = new pg.Client({
    connectionString: server || undefined,
    connectionTimeoutMillis: 3000,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message || String(error) : String(error);
  } finally {
    await client.end().catch(() => {});
  }
}
