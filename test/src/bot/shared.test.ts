import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import type { ConversationStore, NewMessage } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { MemoryChannel } from 'colloquy/testing';
import { runningOn, scriptedAgent } from './bot.fixtures.js';
import {
  dropTestDatabases,
  emptyDatabase,
  openPostgresStore,
  postgresReachable,
  testDatabase,
} from '../../db/postgres/postgres.fixtures.js';

type Open = () => Promise<[ConversationStore, ConversationStore]>;

/**
 * Two bot instances on one store, as behind a load balancer: turns of one conversation land on
 * either, each is answered once, in order, and a dead instance's work is taken up.
 */
function describeSharedBots(name: string, openTwo: Open, cleanup: () => Promise<void>) {
  describe(`two bot instances sharing ${name}`, () => {
    const bots: Bot[] = [];
    const stores: ConversationStore[] = [];
    afterEach(async () => {
      for (const bot of bots.splice(0)) await bot.stop();
      for (const store of stores.splice(0)) await store.close?.();
      await cleanup();
    });

    /** An instance: its own channel (the same conversation), agent and store connection. */
    async function instance(store: ConversationStore, answered: string[]) {
      const channel = new MemoryChannel();
      const agent = scriptedAgent('support-agent', async (message) => {
        // The first question takes longest: without one run at a time, later ones overtake it.
        const slow = message.content.endsWith(' 0') ? 80 : 5;
        await new Promise((resolve) => setTimeout(resolve, slow));
        answered.push(message.content);
        return `re: ${message.content}`;
      });
      const bot = new Bot({
        channels: [channel],
        agents: [agent],
        store,
        logger: silentLogger,
        shared: { leaseTtlMs: 2000, claimEveryMs: 100 },
      });
      bots.push(bot);
      await bot.start();
      return { bot, channel };
    }

    async function pair() {
      const [one, two] = await openTwo();
      stores.push(one, two);
      const answered: string[] = [];
      return {
        answered,
        a: await instance(one, answered),
        b: await instance(two, answered),
        one,
      };
    }

    /**
     * Leaves a turn in `store` as an instance that died holding its conversation's lease for
     * `ttlMs` would: committed, with the agent's run started `attempts` times.
     */
    async function leftByDeadInstance(
      store: ConversationStore,
      content: string,
      messageId: string,
      attempts: number,
      ttlMs: number,
    ) {
      const turn = new MemoryChannel().turn(content, { messageId });
      const run = runningOn(turn, { createdAt: turn.timestamp, attempts });
      await store.commit!([
        { kind: 'append', message: turn },
        { kind: 'run', run, create: true },
      ]);
      const dead = await store.acquireLease!('conversation:memory:room', 'dead-instance', ttlMs);
      expect(dead).toBeDefined();
      return turn;
    }

    it('answers turns spread over both instances once each, in the order they came', async () => {
      const { answered, a, b } = await pair();
      const asked = Array.from({ length: 8 }, (_, i) => `@support-agent question ${i}`);
      // Each turn goes to one instance or the other once the one before it was committed
      // (acknowledged), before the one before it was answered.
      const answers: Promise<void>[] = [];
      for (const [i, content] of asked.entries()) {
        const at = i % 2 === 0 ? a : b;
        answers.push((await at.channel.deliver(content, { messageId: `q${i}` })).handled);
      }
      await Promise.all(answers);
      await a.bot.idle();
      await b.bot.idle();
      expect(answered).toEqual(asked);
      const sent = [...a.channel.sent, ...b.channel.sent].map((m) => m.content).sort();
      expect(sent).toEqual(asked.map((q) => `re: ${q}`).sort());
    });

    it('stores and answers once a turn delivered to both instances at once', async () => {
      const { answered, a, b, one } = await pair();
      await Promise.all([
        a.channel.receive('@support-agent retried', { messageId: 'r1' }),
        b.channel.receive('@support-agent retried', { messageId: 'r1' }),
      ]);
      await a.bot.idle();
      await b.bot.idle();
      expect(answered).toEqual(['@support-agent retried']);
      expect([...a.channel.sent, ...b.channel.sent]).toHaveLength(1);
      expect(await one.get('memory:room')).toHaveLength(2);
    });

    it('answers what it was handed before it stopped, and leaves pending a turn held elsewhere', async () => {
      const [one, two] = await openTwo();
      stores.push(one, two);
      const answered: string[] = [];
      const a = await instance(one, answered);
      // given two questions committed, the first still being answered (its agent is slow)
      const first = await a.channel.deliver('@support-agent question 0', { messageId: 's0' });
      const second = await a.channel.deliver('@support-agent question 1', { messageId: 's1' });

      // when the bot stops at once
      await a.bot.stop();
      await Promise.all([first.handled, second.handled]);

      // then both were answered: nobody else held the conversation
      expect(answered).toEqual(['@support-agent question 0', '@support-agent question 1']);
      const statuses = await two.getRuns!({ conversationId: first.message.conversationId });
      expect(statuses.map((run) => run.status)).toEqual(['answered', 'answered']);

      // and given a conversation another instance holds, a turn there is left pending at stop
      expect(
        await two.acquireLease!('conversation:memory:room', 'other-instance', 10_000),
      ).toBeDefined();
      const b = await instance(two, answered);
      const held = await b.channel.deliver('@support-agent question 2', { messageId: 's2' });
      await b.bot.stop();
      await held.handled;
      expect(answered).toHaveLength(2);
      const [left] = await two.getRuns!({ messageId: held.message.id });
      expect(left).toMatchObject({ status: 'pending' });
    });

    it("takes up a dead instance's unfinished run once its lease expires", async () => {
      const [one, two] = await openTwo();
      stores.push(one, two);
      // given a turn committed with its run pending by an instance that died holding the lease
      const turn = await leftByDeadInstance(one, '@support-agent anyone?', 'd1', 1, 3000);
      // when another instance runs
      const answered: string[] = [];
      const b = await instance(two, answered);
      // then it leaves the run alone while the lease holds…
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(answered).toEqual([]);
      // …and answers the turn, once, after the dead one's lease ran out
      await waitFor(
        async () => (await two.getRuns!({ messageId: turn.id }))[0]?.status === 'answered',
      );
      await b.bot.idle();
      expect(answered).toEqual(['@support-agent anyone?']);
      expect(b.channel.sent.map((m) => m.content)).toEqual(['re: @support-agent anyone?']);
    });

    it('sends nothing for a run whose reply an instance that outlived its lease recorded first', async () => {
      const [one, two] = await openTwo();
      stores.push(one, two);
      // given a turn whose run an instance started, then stalled past its lease
      const turn = await leftByDeadInstance(one, '@support-agent late?', 'l1', 1, 300);
      const run = (await one.getRuns!({ messageId: turn.id }))[0]!;
      const stalled: NewMessage = {
        id: `${run.id}:reply`,
        conversationId: turn.conversationId,
        participant: { kind: 'agent', id: 'support-agent' },
        content: 'the stalled answer',
        timestamp: new Date(Date.parse(turn.timestamp) + 1).toISOString(),
        scope: turn.scope,
        metadata: { channelType: 'memory', channelId: 'room' },
      };
      // when, as another instance takes the conversation over and runs the agent again, the
      // stalled one wakes and records its reply first
      const channel = new MemoryChannel();
      const agent = scriptedAgent('support-agent', async () => {
        await one.commit!([
          { kind: 'run', run: { ...run, replyId: stalled.id } },
          { kind: 'reply', message: stalled },
        ]);
        return 'the second answer';
      });
      const bot = new Bot({
        channels: [channel],
        agents: [agent],
        store: two,
        logger: silentLogger,
        shared: { leaseTtlMs: 2000, claimEveryMs: 100 },
      });
      bots.push(bot);
      await bot.start();
      await waitFor(async () => agent.runs.length > 0);
      await bot.idle();

      // then the instance that took over sent nothing, and left the reply to the stalled one
      expect(channel.sent).toEqual([]);
      const replies = (await two.get(turn.conversationId)).filter((m) => m.id === stalled.id);
      expect(replies.map((m) => m.content)).toEqual(['the stalled answer']);
    });

    it("fails a dead instance's run started maxRunAttempts times instead of taking it up", async () => {
      const [one, two] = await openTwo();
      stores.push(one, two);
      // given a turn whose run an instance that died holding the lease had started three times
      const turn = await leftByDeadInstance(one, '@support-agent poison', 'p1', 3, 500);

      // when another instance takes the conversation over once the lease ran out
      const answered: string[] = [];
      const b = await instance(two, answered);
      await waitFor(
        async () => (await two.getRuns!({ messageId: turn.id }))[0]?.status === 'failed',
      );
      await b.bot.idle();

      // then its agent was not started on the turn again, nothing was sent, and the run says why
      expect(answered).toEqual([]);
      expect(b.channel.sent).toEqual([]);
      const [ended] = await two.getRuns!({ messageId: turn.id });
      expect(ended).toMatchObject({ status: 'failed', attempts: 3 });
      expect(ended?.error).toContain('(maxRunAttempts 3)');
    });
  });
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('BotOptions.shared on a store that cannot be shared', () => {
  it('refuses to start, naming what the store lacks', async () => {
    // A store with leases but no agent runs: nothing it could hand over to another instance.
    const store = Object.assign(Object.create(new InMemoryConversationStore()), {
      getRuns: undefined,
    }) as ConversationStore;
    const bot = new Bot({
      channels: [new MemoryChannel()],
      agents: [scriptedAgent('support-agent', () => 'hi')],
      store,
      logger: silentLogger,
      shared: true,
    });
    await expect(bot.start()).rejects.toThrow(/needs a store with leases and agent runs/);
  });
});

const dir = mkdtempSync(join(tmpdir(), 'colloquy-shared-bots-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
describeSharedBots(
  'one SQLite file',
  async () => {
    const path = join(dir, `shared-${++files}.db`);
    return [SqliteConversationStore.open(path), SqliteConversationStore.open(path)];
  },
  async () => {},
);

describe.skipIf(!postgresReachable)('on Postgres', () => {
  let url = '';
  beforeAll(async () => {
    url = await testDatabase();
  });
  afterAll(dropTestDatabases);
  describeSharedBots(
    'one Postgres database',
    async () => [await openPostgresStore(url), await openPostgresStore(url)],
    () => emptyDatabase(url),
  );
});
