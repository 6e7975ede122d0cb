import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewMessage, StoreOperation } from 'colloquy';
import type { PostgresConversationStore } from 'colloquy/postgres';
import type { AgentRun } from '../../../src/runs.js';
import { seededRandom } from '../../crash/harness.js';
import {
  dropTestDatabases,
  numberedTurn,
  failuresOf,
  openPostgresStore,
  postgresReachable,
  testDatabase,
} from './postgres.fixtures.js';

// Two instances of a bot share one database: each commits bursts of what its capture queue
// holds (people's turns and their runs, replies, confirmations, run updates) for the same
// conversations, people and bot. Their transactions must never wait on each other in a cycle.

const CONVERSATIONS = 6;
const PEOPLE = 6;
const BOT = { kind: 'agent', id: 'support-agent', displayName: 'Support' } as const;

/**
 * One instance's writes, as its capture hands them over: a burst per commit. `said` is every
 * person's turn so far, of either instance: each burst edits two of them and deletes one (a
 * platform's edit or deletion reaches any instance).
 */
function instance(name: string, random: () => number, said: NewMessage[]) {
  const pick = (n: number) => Math.floor(random() * n);
  let n = 0;
  const replied: { reply: NewMessage; run: AgentRun }[] = [];
  const turn = (
    conversation: number,
    participant: NewMessage['participant'],
    metadata?: Partial<NewMessage['metadata']>,
  ) => numberedTurn(name, ++n, conversation, participant, metadata);
  const runOf = (message: NewMessage, status: AgentRun['status']): AgentRun => ({
    id: `${message.id}:${BOT.id}`,
    messageId: message.id,
    conversationId: message.conversationId,
    agentId: BOT.id,
    status,
    createdAt: message.timestamp,
    attempts: 1,
  });
  /** A few turns' worth of ops, interleaved as unrelated turns interleave in one queue. */
  return (): StoreOperation[] => {
    const pieces: StoreOperation[][] = [];
    for (let i = 0; i < 3; i++) {
      const person = pick(PEOPLE);
      const inbound = turn(pick(CONVERSATIONS), { kind: 'user', id: `telegram:${person}` });
      said.push(inbound);
      pieces.push([
        { kind: 'append', message: inbound },
        { kind: 'run', run: runOf(inbound, 'pending'), create: true },
      ]);
    }
    for (const [i, edited] of [pick(said.length), pick(said.length), -1].entries()) {
      const { metadata, timestamp } = said.at(edited)!;
      const ref = {
        channelType: 'telegram',
        channelId: metadata.channelId!,
        messageId: metadata.messageId!,
      };
      const at = new Date(Date.parse(timestamp) + 1000 * (n + i)).toISOString();
      pieces.push([
        i < 2
          ? { kind: 'edit', edit: { ...ref, content: `edited by ${name} at ${n}`, editedAt: at } }
          : { kind: 'delete', deletion: { ...ref, deletedAt: at } },
      ]);
    }
    for (let i = 0; i < 2; i++) {
      const reply = turn(pick(CONVERSATIONS), BOT);
      const run = { ...runOf(reply, 'running'), replyId: reply.id };
      replied.push({ reply, run });
      pieces.push([
        { kind: 'run', run },
        { kind: 'reply', message: reply },
      ]);
    }
    for (const { reply, run } of replied.splice(0, replied.length - 2)) {
      const { id, conversationId } = reply;
      pieces.push([
        {
          kind: 'confirm',
          confirmation: { id, conversationId, messageIds: [`sent-${id}`], delivery: 'sent' },
        },
        { kind: 'run', run: { ...run, status: 'answered' } },
      ]);
    }
    return pieces.sort(() => random() - 0.5).flat();
  };
}

describe.skipIf(!postgresReachable)('two instances on one Postgres database', () => {
  let url = '';
  const stores: PostgresConversationStore[] = [];
  beforeAll(async () => {
    url = await testDatabase();
    for (let i = 0; i < 2; i++) stores.push(await openPostgresStore(url));
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await dropTestDatabases();
  });

  it('commit bursts over the same conversations, people, turns and bot without deadlocking', async () => {
    // given two stores, as two instances open them, each watched for failed statements
    const failures = stores.map(failuresOf);
    const random = seededRandom(34);
    const said: NewMessage[] = [];
    const bursts = ['a', 'b'].map((name) => instance(name, random, said));

    // when both commit bursts side by side, several at once each (a commit per capture queue)
    const results = await Promise.all(
      stores.flatMap((store, i) =>
        Array.from({ length: 2 }, async () => {
          const answers = [];
          for (let round = 0; round < 20; round++)
            answers.push(...(await store.commit(bursts[i]!())));
          return answers;
        }),
      ),
    );

    // then every op went in, and no statement failed on the way (no deadlock retried away)
    expect(results.flat().flatMap((result) => (result.ok ? [] : [result.error.message]))).toEqual(
      [],
    );
    expect(failures.flat()).toEqual([]);
  }, 60_000);
});
