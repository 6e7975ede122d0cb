import { inject } from 'vitest';
import pg from 'pg';
import type { NewMessage } from 'colloquy';
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
      DELETE FROM leases; DELETE FROM conversations; DELETE FROM participants;
      DELETE FROM scheduled_posts;`);
  } finally {
    await client.end();
  }
}

/** A store on `url`, its schema checked (the template is migrated already). */
export function openPostgresStore(url: string): Promise<PostgresConversationStore> {
  return PostgresConversationStore.open({ connectionString: url, max: 4 });
}

/**
 * A store on `url` whose failed statements are watched from its first connection: the
 * SQLSTATE of each lands in `failures` (a deadlock is 40P01, even one the store ran again).
 */
export async function openWatchedStore(
  url: string,
): Promise<{ store: PostgresConversationStore; failures: string[] }> {
  const store = new PostgresConversationStore({ connectionString: url, max: 4 });
  const failures = failuresOf(store);
  await store.ready();
  return { store, failures };
}

/** SQLSTATEs of the statements that fail on `store`'s connections opened from now on. */
export function failuresOf(store: PostgresConversationStore): string[] {
  const codes: string[] = [];
  store.pool.on('connect', (client: pg.PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const answer = query(...args);
      if (answer instanceof Promise) {
        answer.catch((error: { code?: string }) => codes.push(error.code ?? 'none'));
      }
      return answer;
    };
  });
  return codes;
}

/**
 * Turn `n` of a writer named `name` in `telegram:<conversation>`, a millisecond after turn
 * `n - 1`: what the concurrency suites commit in bursts.
 */
export function numberedTurn(
  name: string,
  n: number,
  conversation: number,
  participant: NewMessage['participant'],
  metadata: Partial<NewMessage['metadata']> = {},
): NewMessage {
  return {
    id: `${name}-${n}`,
    conversationId: `telegram:${conversation}`,
    participant,
    content: `${name} turn ${n}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, n)).toISOString(),
    scope: 'dm',
    metadata: {
      channelType: 'telegram',
      channelId: String(conversation),
      messageId: `${name}${n}`,
      ...metadata,
    },
  };
}
