import { inject } from 'vitest';
import pg from 'pg';
import { PostgresConversationStore } from 'colloquy/postgres';
import { TEMPLATE_LOCK, databaseUrl } from '../../postgres.setup.js';

/** The test server and template, or why there is none (outside CI; under CI setup failed). */
export const postgres = inject('postgres');
export const postgresReachable = 'template' in postgres;

let databases = 0;
const made: string[] = [];

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  if (!('template' in postgres)) throw new Error(`no test Postgres: ${postgres.unreachable}`);
  const client = new pg.Client({ connectionString: postgres.server || undefined });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * A new database copied from the migrated template (a few hundred ms), dropped by
 * `dropTestDatabases`. One per test file is the usual; `emptyDatabase` clears it between tests.
 */
export async function testDatabase(): Promise<string> {
  if (!('template' in postgres)) throw new Error(`no test Postgres: ${postgres.unreachable}`);
  const { server, template } = postgres;
  const name = `colloquy_test_${process.pid}_${Date.now().toString(36)}_${++databases}`;
  await admin(async (client) => {
    await client.query('SELECT pg_advisory_lock_shared($1)', [TEMPLATE_LOCK]);
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  });
  made.push(name);
  return databaseUrl(server, name);
}

/** Drops the databases this test file made. */
export async function dropTestDatabases(): Promise<void> {
  const names = made.splice(0);
  if (names.length === 0) return;
  await admin(async (client) => {
    for (const name of names) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
}

/** Deletes every row of colloquy's tables (a fraction of a millisecond on a small database). */
export async function emptyDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DELETE FROM message_mentions; DELETE FROM message_revisions;
      DELETE FROM messages; DELETE FROM agent_runs; DELETE FROM colloquy_state;
      DELETE FROM leases; DELETE FROM conversations; DELETE FROM participants;`);
  } finally {
    await client.end();
  }
}

/** A store on `url`, its schema checked (the template is migrated already). */
export function openPostgresStore(url: string): Promise<PostgresConversationStore> {
  return PostgresConversationStore.open({ connectionString: url, max: 4 });
}
