import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresConversationStore } from 'colloquy/postgres';
import { FIND_RUNS } from '../../../db/postgres/runs.js';
import { PG } from '../../../db/postgres/statements.js';
import {
  dropTestDatabases,
  openPostgresStore,
  postgresReachable,
  testDatabase,
} from './postgres.fixtures.js';

describe.skipIf(!postgresReachable)('the Postgres agent_runs queries', () => {
  let store: PostgresConversationStore;
  beforeAll(async () => {
    store = await openPostgresStore(await testDatabase());
  });
  afterAll(async () => {
    await store.close();
    await dropTestDatabases();
  });

  it("reads a conversation's runs by its index when draining, forgetting and deleting", async () => {
    // given 200 conversations with 50 runs each, a fifth of them unfinished
    await store.pool.query(`INSERT INTO agent_runs (id, message_id, conversation_id, agent_id,
        status, created_at, prompt)
      SELECT 'm' || i || ':bot', 'm' || i, 'telegram:' || i % 200, 'bot',
        CASE WHEN i % 5 = 0 THEN 'pending' ELSE 'answered' END,
        timestamptz '2026-01-01' + i * interval '1 second', '[]'
      FROM generate_series(1, 10000) AS i`);
    await store.pool.query('ANALYZE agent_runs');

    // when the drain, forgetting and deleting read one conversation's runs
    const statements: [string, unknown[]][] = [
      [FIND_RUNS, [['pending', 'running'], null, 'telegram:7']],
      [PG.forgetPrompts, [['telegram:7', 'telegram:8']]],
      [PG.deleteRuns, ['telegram:7']],
    ];

    // then each goes straight to that conversation's rows
    for (const [sql, params] of statements) {
      const { rows } = await store.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params);
      const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(plan, sql).toMatch(/Index Scan (using|on) agent_runs_conversation_idx\b/);
      expect(plan, sql).not.toMatch(/Seq Scan on agent_runs\b/);
    }
  });
});
