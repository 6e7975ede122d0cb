import { SqliteConversationStore } from 'colloquy/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresConversationStore } from 'colloquy/postgres';
import { populate } from '../../fixtures/populate.js';
import { sqlExamples } from '../../fixtures/sql-examples.js';
import {
  dropTestDatabases,
  openPostgresStore,
  postgresReachable,
  testDatabase,
} from './postgres.fixtures.js';

const onSqlite = sqlExamples('sql.md');
const onPostgres = sqlExamples('postgres.md');

describe('docs/postgres.md', () => {
  it('has every docs/sql.md example in its Postgres form, under the same heading', () => {
    expect(onPostgres.map((d) => d.title)).toEqual(onSqlite.map((d) => d.title));
  });
});

describe.skipIf(!postgresReachable)('docs/postgres.md on a real Postgres', () => {
  let sqlite: SqliteConversationStore;
  let store: PostgresConversationStore;
  beforeAll(async () => {
    sqlite = new SqliteConversationStore({ path: ':memory:' });
    await populate(sqlite);
    store = await openPostgresStore(await testDatabase());
    await populate(store);
  });
  afterAll(async () => {
    await store?.close();
    await sqlite?.close();
    await dropTestDatabases();
  });

  const run = async (title: string) => {
    const example = onPostgres.find((d) => d.title.startsWith(title));
    return (await store.pool.query(example!.sql)).rows as Record<string, unknown>[];
  };

  it.each(onPostgres.map((d) => [d.title, d.sql] as const))(
    '%s: answers as many rows as on SQLite',
    async (title, sql) => {
      const rows = (await store.pool.query(sql)).rows;
      expect(rows.length).toBeGreaterThanOrEqual(1);
      const twin = onSqlite.find((d) => d.title === title)!;
      expect(rows).toHaveLength(sqlite.db.prepare(twin.sql).all().length);
    },
  );

  it('finds the same unanswered mention, answer to Alice, cited document and titled conversation', async () => {
    expect((await run('Turns that mentioned the bot')).map((r) => r.content)).toEqual([
      '<@UBOT> can you reset my password?',
    ]);
    const refund = 'Yes: invoice 88 qualifies for a refund; it will reach your card within 5 days.';
    expect((await run('What did the bot tell Alice')).map((r) => r.text)).toEqual([refund]);
    expect(await run('Which answers cited a document')).toEqual([
      expect.objectContaining({ position: 1, chunk: '2', score: 0.91, content: refund }),
    ]);
    expect(await run('Every PDF people sent')).toEqual([
      expect.objectContaining({ sender: 'Alice Martin', name: 'invoice-march.pdf', size: 245760 }),
    ]);
    expect((await run('Answers people thumbed down')).map((r) => [r.who, r.answer])).toEqual([
      ['Bob Chen', 'Yes, the pipeline clears the cache after every deploy.'],
    ]);
    expect(await run('Conversations by title and metadata')).toEqual([
      expect.objectContaining({ title: 'Refund for invoice 88', ticket: 'T-88', message_count: 3 }),
    ]);
  });
});
