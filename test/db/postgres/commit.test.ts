import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { NewMessage, StoreOperation } from 'colloquy';
import pg from 'pg';
import { type PostgresConversationStore, withClient } from 'colloquy/postgres';
import type { AgentRun } from '../../../src/runs.js';
import {
  dropTestDatabases,
  emptyDatabase,
  openPostgresStore,
  postgresReachable,
  testDatabase,
} from './postgres.fixtures.js';

// `PostgresConversationStore.commit` writes a burst of new turns (and their new runs) in one
// statement each: it must answer exactly as the ops one by one would.
describe.skipIf(!postgresReachable)('PostgresConversationStore.commit, group commit', () => {
  let url = '';
  let store: PostgresConversationStore;
  beforeAll(async () => {
    url = await testDatabase();
    store = await openPostgresStore(url);
  });
  afterEach(() => emptyDatabase(url));
  afterAll(async () => {
    await store?.close();
    await dropTestDatabases();
  });

  let n = 0;
  function turn(channelId: string, fields: Partial<NewMessage> = {}): NewMessage {
    n++;
    return {
      id: `m-${n}`,
      conversationId: `slack:T1:${channelId}`,
      participant: { kind: 'user', id: `slack:U${n % 3}`, displayName: `Person ${n % 3}` },
      content: `turn ${n} about refunds`,
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
      scope: 'channel',
      metadata: { channelType: 'slack', channelId, messageId: `p-${n}`, mentions: ['bot', 'x'] },
      ...fields,
    };
  }
  const append = (message: NewMessage): StoreOperation => ({ kind: 'append', message });
  const run = (message: NewMessage): AgentRun => ({
    id: `${message.id}:agent`,
    messageId: message.id,
    conversationId: message.conversationId,
    agentId: 'agent',
    status: 'pending',
    createdAt: message.timestamp,
    attempts: 0,
  });

  it('stores a burst of turns and their runs in call order, counting each conversation', async () => {
    const turns = Array.from({ length: 50 }, (_, i) => turn(`C${i % 5}`));
    const ops = turns.flatMap((t): StoreOperation[] => [
      append(t),
      { kind: 'run', run: run(t), create: true },
    ]);
    const results = await store.commit(ops);
    expect(results.every((r) => r.ok)).toBe(true);
    const seqs = results.flatMap((r) =>
      r.ok && r.value !== undefined
        ? [(r.value as { message: { sequence: number } }).message.sequence]
        : [],
    );
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(50);
    for (let c = 0; c < 5; c++) {
      expect((await store.getConversation(`slack:T1:C${c}`))?.messageCount).toBe(10);
    }
    const [first] = await store.get('slack:T1:C0', { limit: 1 });
    expect(first?.metadata.mentions).toEqual(['bot', 'x']);
    expect(await store.getRuns({ statuses: ['pending'] })).toHaveLength(50);
    expect(await store.search('slack:T1:C3', 'refunds')).toHaveLength(10);
  });

  it('answers a repeated turn with the stored one, whether stored before or earlier in the batch', async () => {
    const before = turn('C1');
    await store.append(before);
    const fresh = turn('C1');
    const again = { ...fresh, content: 'the same turn again' };
    const samePost = turn('C1', { id: 'another-id' });
    samePost.metadata.messageId = fresh.metadata.messageId;
    const results = await store.commit([before, fresh, again, samePost].map(append));
    expect(results.map((r) => r.ok && (r.value as { inserted: boolean }).inserted)).toEqual([
      false,
      true,
      false,
      false,
    ]);
    const stored = (results[1] as { value: { message: { sequence: number } } }).value.message;
    for (const i of [2, 3]) {
      expect(
        (results[i] as { value: { message: { sequence: number; content: string } } }).value.message,
      ).toMatchObject({
        sequence: stored.sequence,
        content: fresh.content,
      });
    }
    expect((await store.getConversation('slack:T1:C1'))?.messageCount).toBe(2);
  });

  it.each([
    ['later', '2026-01-01T00:00:35.532Z'],
    ['earlier', '2026-01-01T00:00:35.000Z'],
  ])(
    "keeps the conversation's last_message_at at its newest turn when a confirmation moves a reply %s",
    async (_how, platformTime) => {
      // given a person's turn and a reply recorded before it was sent
      const asked = turn('C7', { timestamp: '2026-01-01T00:00:34.900Z' });
      const reply = turn('C7', {
        participant: { kind: 'agent', id: 'support-agent' },
        timestamp: '2026-01-01T00:00:35.521Z',
      });
      await store.commit([append(asked), { kind: 'reply', message: reply }]);

      // when the platform's confirmation gives the reply its own time
      const [confirmed] = await store.commit([
        {
          kind: 'confirm',
          confirmation: {
            id: reply.id,
            conversationId: reply.conversationId,
            messageIds: ['p-sent'],
            delivery: 'sent',
            timestamp: platformTime,
          },
        },
      ]);

      // then the conversation's last message time is the newest turn's
      expect(confirmed).toMatchObject({ ok: true, value: true });
      const { rows } = await store.pool.query<{ last: string; newest: string }>(
        `SELECT c.last_message_at AS last, max(m.timestamp) AS newest
         FROM conversations c JOIN messages m ON m.conversation_id = c.id
         WHERE c.id = $1 GROUP BY c.id`,
        [reply.conversationId],
      );
      expect(rows).toEqual([{ last: platformTime, newest: platformTime }]);
    },
  );

  it("stores a run's token counts as whole numbers, and the run when a count is no count", async () => {
    // given runs whose model reported a fraction, a count past 32 bits, a negative and NaN
    const [first, second] = [turn('C8'), turn('C8')];
    const created = { ...run(first!), inputTokens: 12.6, outputTokens: 3e9 };
    const updated = { ...run(second!), status: 'answered' as const, inputTokens: -1 };

    // when one is created with its turn and the other written whole after its turn
    const results = await store.commit([
      append(first!),
      { kind: 'run', run: created, create: true },
      append(second!),
    ]);
    const [written] = await store.commit([
      { kind: 'run', run: { ...updated, outputTokens: Number.NaN } },
    ]);

    // then both runs are stored, with the counts that are counts
    expect([...results, written].map((result) => result?.ok)).toEqual([true, true, true, true]);
    const runs = await store.getRuns({ conversationId: first!.conversationId });
    expect(
      runs.map(({ id, inputTokens, outputTokens }) => ({ id, inputTokens, outputTokens })),
    ).toEqual([
      { id: created.id, inputTokens: 13, outputTokens: undefined },
      { id: updated.id, inputTokens: undefined, outputTokens: undefined },
    ]);
  });

  it('refuses only the op that cannot be written, and stores the others', async () => {
    const good = [turn('C2'), turn('C2')];
    const bad = turn('C2', { timestamp: 'not a date' });
    const results = await store.commit([append(good[0]!), append(bad), append(good[1]!)]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    expect(results[1]).toMatchObject({ ok: false, error: { transient: false } });
    expect((await store.get('slack:T1:C2')).map((m) => m.id)).toEqual(good.map((t) => t.id));
  });
});

describe.skipIf(!postgresReachable)('PostgresConversationStore: a connection that breaks', () => {
  let url = '';
  beforeAll(async () => {
    url = await testDatabase();
  });
  afterAll(() => dropTestDatabases());

  it('fails the write in flight, never the process, and the next write gets a new connection', async () => {
    // given a store, and a second pool to kill the store's connections with
    const store = await openPostgresStore(url);
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    const kill = () =>
      admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE application_name = 'colloquy' AND datname = current_database()`,
      );
    try {
      // when the connection a commit holds is terminated between two of its statements
      const held = withClient(store.pool, async (client) => {
        await client.query('BEGIN');
        await kill();
        await new Promise((resolve) => setTimeout(resolve, 200)); // its error event fires now
        await client.query('COMMIT');
      });

      // then that work fails with the connection's error (vitest fails on an uncaught one)
      await expect(held).rejects.toThrow(/not queryable|terminat/i);
      // and the store writes on through a fresh connection
      const [result] = await store.commit([
        {
          kind: 'append',
          message: {
            id: 'after-kill',
            conversationId: 'slack:T1:C1',
            participant: { kind: 'user', id: 'slack:U1' },
            content: 'still here',
            timestamp: '2026-01-01T00:00:00.000Z',
            scope: 'channel',
            metadata: { channelType: 'slack', channelId: 'C1' },
          },
        },
      ]);
      expect(result).toMatchObject({ ok: true, value: { inserted: true } });
    } finally {
      await admin.end();
      await store.close();
    }
  });
});
