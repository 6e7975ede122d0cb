import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewMessage, StoreOperation } from 'colloquy';
import pg from 'pg';
import type { PostgresConversationStore } from 'colloquy/postgres';
import type { AgentRun } from '../../../src/runs.js';
import { CONVERSATIONS_OF } from '../../../db/postgres/deletes.js';
import { seededRandom } from '../../crash/harness.js';
import {
  dropTestDatabases,
  numberedTurn,
  emptyDatabase,
  openWatchedStore,
  postgresReachable,
  testDatabase,
} from './postgres.fixtures.js';

// Forgetting people, deleting turns and conversations while two instances capture into the
// same conversations: every transaction takes its locks in one order, so none waits on another
// in a cycle and Postgres never has to pick a deadlock victim.

const CONVERSATIONS = 4;
const PEOPLE = 5;
const BOT = { kind: 'agent', id: 'support-agent', displayName: 'Support' } as const;
const person = (i: number) => ({ kind: 'user', id: `telegram:${i}` }) as const;

/** The turns, replies, confirmations and runs one instance commits, a burst at a time. */
function capture(name: string, random: () => number) {
  const pick = (n: number) => Math.floor(random() * n);
  let n = 0;
  const sent: NewMessage[] = [];
  const turn = (
    conversation: number,
    participant: NewMessage['participant'],
    metadata?: Partial<NewMessage['metadata']>,
  ) => numberedTurn(name, ++n, conversation, participant, metadata);
  const run = (message: NewMessage, replyId?: string): AgentRun => ({
    id: `${message.id}:${BOT.id}`,
    messageId: message.id,
    conversationId: message.conversationId,
    agentId: BOT.id,
    status: replyId === undefined ? 'pending' : 'running',
    createdAt: message.timestamp,
    attempts: 1,
    ...(replyId === undefined ? {} : { replyId }),
  });
  return (): StoreOperation[] => {
    const ops: StoreOperation[] = [];
    for (let i = 0; i < 3; i++) {
      const author = pick(PEOPLE);
      const conversation = pick(CONVERSATIONS);
      const inbound = turn(conversation, person(author), {
        mentions: [person(pick(PEOPLE)).id],
      });
      const reply = turn(conversation, BOT, {
        messageId: undefined,
        replyToMessageId: inbound.id,
        replyToParticipantId: inbound.participant.id,
      });
      ops.push(
        { kind: 'append', message: inbound },
        { kind: 'run', run: run(inbound), create: true },
        { kind: 'reply', message: reply },
        { kind: 'run', run: run(inbound, reply.id) },
      );
      sent.push(reply);
    }
    // The replies of the burst before: most posted (at the platform's time), one refused.
    for (const [i, reply] of sent.splice(0, sent.length - 3).entries()) {
      const { id, conversationId } = reply;
      const at = new Date(Date.parse(reply.timestamp) + 5).toISOString();
      ops.push({
        kind: 'confirm',
        confirmation:
          i === 0
            ? { id, conversationId, messageIds: [], delivery: 'failed' }
            : { id, conversationId, messageIds: [`p-${id}`], delivery: 'sent', timestamp: at },
      });
    }
    return ops.sort(() => random() - 0.5).sort((a, b) => rank(a) - rank(b));
  };
}

/** Appends before the runs and replies that name them, confirmations after. */
function rank(op: StoreOperation): number {
  return op.kind === 'append' ? 0 : op.kind === 'confirm' ? 2 : 1;
}

/** Conversations whose count or span differ from their turns'. */
async function wrongTallies(url: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT c.id, c.message_count, t.n,
        c.created_at, t.first, c.last_message_at, t.last
      FROM conversations c
      LEFT JOIN (SELECT conversation_id, count(*)::int AS n, min(timestamp) AS first,
          max(timestamp) AS last FROM messages GROUP BY conversation_id) t
        ON t.conversation_id = c.id
      WHERE c.message_count <> coalesce(t.n, 0)
        OR (t.n > 0 AND (c.created_at <> t.first OR c.last_message_at <> t.last))
      ORDER BY c.id`);
    return rows;
  } finally {
    await client.end();
  }
}

/** Resolves once a connection to `url` waits for a lock in a statement starting with `text`. */
async function waitingOn(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (;;) {
      const { rowCount } = await client.query(
        `SELECT FROM pg_stat_activity WHERE datname = current_database()
          AND wait_event_type = 'Lock' AND starts_with(query, $1)`,
        [text],
      );
      if ((rowCount ?? 0) > 0) return;
    }
  } finally {
    await client.end();
  }
}

describe.skipIf(!postgresReachable)('deleting beside capture on one Postgres database', () => {
  let url = '';
  const stores: PostgresConversationStore[] = [];
  const failures: string[][] = [];
  beforeAll(async () => {
    url = await testDatabase();
    for (let i = 0; i < 2; i++) {
      const watched = await openWatchedStore(url);
      stores.push(watched.store);
      failures.push(watched.failures);
    }
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await dropTestDatabases();
  });

  it('forgets people and deletes turns and conversations while two instances capture, without a deadlock', async () => {
    // given two instances capturing into the same few conversations, people and bot, each
    // committing a queue's bursts one after another (a reply before its confirmation)
    await emptyDatabase(url);
    const random = seededRandom(34);
    const pick = (n: number) => Math.floor(random() * n);
    const queues = stores.flatMap((store, i) =>
      ['a', 'b'].map((queue) => ({ store, burst: capture(`${i}${queue}`, random) })),
    );
    for (const { store, burst } of queues) await store.commit(burst());

    // when they keep capturing (two queues each) while both forget people and one deletes
    // turns and conversations
    const captured = queues.map(async ({ store, burst }) => {
      const answers = [];
      for (let round = 0; round < 15; round++) answers.push(...(await store.commit(burst())));
      return answers;
    });
    const refused: string[] = [];
    const refuse = (error: Error) => refused.push(error.message);
    const forgot = stores.map(async (store, i) => {
      for (let round = 0; round < 12; round++) {
        const mode = round % 3 === i ? 'redact' : 'delete';
        await store.forgetParticipant(person(pick(PEOPLE)).id, { mode }).catch(refuse);
      }
    });
    const deleted = (async () => {
      const store = stores[0]!;
      for (let round = 0; round < 8; round++) {
        const conversationId = `telegram:${pick(CONVERSATIONS)}`;
        const recent = await store.get(conversationId, { limit: 4 });
        const ids = recent.map((message) => message.id);
        await store.deleteMessages(conversationId, ids).catch(refuse);
        if (round % 4 === 3) {
          await store.deleteConversation(`telegram:${pick(CONVERSATIONS)}`).catch(refuse);
        }
      }
    })();
    const results = (await Promise.all(captured)).flat();
    await Promise.all([...forgot, deleted]);

    // then every op went in, no statement failed (no deadlock run again) and the tallies hold
    expect(results.flatMap((result) => (result.ok ? [] : [result.error.message]))).toEqual([]);
    expect(refused).toEqual([]);
    expect(failures.flat()).toEqual([]);
    expect(await wrongTallies(url)).toEqual([]);
  }, 120_000);

  it('forgets a person who has no row yet while a capture writes their first turn', async () => {
    // given a person mentioned in one conversation who never wrote, a client holding that
    // mention's row (so the forget stops at its mentions, after it has read the person's turns)
    await emptyDatabase(url);
    const [store] = stores;
    const mention = numberedTurn('m', 1, 1, person(9), { mentions: [person(0).id] });
    await store!.commit([{ kind: 'append', message: mention }]);
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT FROM message_mentions WHERE participant_id = $1 FOR UPDATE`, [
        person(0).id,
      ]);

      // when they are forgotten, and their first turn, in another conversation, commits while
      // the forget waits there
      const forgotten = store!.forgetParticipant(person(0).id);
      await waitingOn(url, 'DELETE FROM message_mentions');
      const first = numberedTurn('m', 2, 2, person(0));
      const [written] = await store!.commit([{ kind: 'append', message: first }]);
      await holder.query('COMMIT');

      // then the forget succeeds, the mention goes, and the turn written beside it stays, by
      // the person as they are from then on, with the tallies holding
      expect(written?.ok).toBe(true);
      await expect(forgotten).resolves.toBe(0);
      expect(
        (await store!.getMessage(mention.conversationId, mention.id))?.metadata.mentions ?? [],
      ).toEqual([]);
      expect((await store!.getMessage(first.conversationId, first.id))?.participant.id).toBe(
        person(0).id,
      );
      expect(await wrongTallies(url)).toEqual([]);
    } finally {
      await holder.end();
    }
  });

  it('recounts every conversation a forgotten person wrote in', async () => {
    // given three people and the bot in three conversations
    await emptyDatabase(url);
    const [store] = stores;
    const burst = capture('c', seededRandom(7));
    for (let round = 0; round < 6; round++) await store!.commit(burst());
    const before = await store!.listConversations();

    // when one of them is forgotten
    const forgotten = await store!.forgetParticipant(person(0).id);

    // then each conversation counts and spans the turns left in it
    expect(forgotten).toBeGreaterThan(0);
    expect(await wrongTallies(url)).toEqual([]);
    const after = await store!.listConversations();
    const total = (page: typeof before) =>
      page.items.reduce((sum, conversation) => sum + conversation.messageCount, 0);
    expect(total(before) - total(after)).toBe(forgotten);
  });

  it("finds the threads under a forgotten person's turns by the thread parent index", async () => {
    // given 20,000 turns by 200 people in 100 channels, one in a thousand a thread's turn
    // retelling an earlier turn of the same channel
    await emptyDatabase(url);
    const [store] = stores;
    await store!.pool.query(`INSERT INTO participants (id, kind, first_seen_at, last_seen_at)
      SELECT 'telegram:p' || i, 'user', now(), now() FROM generate_series(0, 199) AS i`);
    await store!.pool.query(`INSERT INTO conversations (id, channel_type, channel_id, scope,
        created_at, last_message_at)
      SELECT 'telegram:' || i, 'telegram', 'c' || i, 'channel', now(), now()
      FROM generate_series(0, 99) AS i`);
    await store!.pool.query(`INSERT INTO messages (id, conversation_id, participant_id, content,
        timestamp, scope, channel_type, channel_id, metadata)
      SELECT 'm' || i, 'telegram:' || i % 100, 'telegram:p' || i % 200, 'hello',
        timestamptz '2026-01-01' + i * interval '1 second', 'channel', 'telegram', 'c' || i % 100,
        CASE WHEN i % 1000 = 999
          THEN jsonb_build_object('threadParent', jsonb_build_object('id', 'm' || i - 900))
          ELSE '{}' END
      FROM generate_series(0, 19999) AS i`);
    await store!.pool.query('ANALYZE messages');

    // when forgetting reads the conversations a person changes
    const { rows } = await store!.pool.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN ${CONVERSATIONS_OF}`,
      ['telegram:p7'],
    );
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');

    // then it reads the thread turns from their index, not from every turn
    expect(plan).toMatch(/Index (Only )?Scan (using|on) messages_thread_parent_idx\b/);
  });
});
