import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { BaseAgent, Bot, silentLogger } from 'colloquy';
import { RedisConversationStore } from 'colloquy/redis';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';
import { answer } from '../../fixtures/model-answer.js';
import { StoreError } from '../../../src/errors.js';
import { PARTS_WITHIN } from '../../../src/store.js';
import type { NewMessage } from '../../../src/types.js';
import {
  C1,
  closeTestClient,
  dropPrefix,
  openRedisStore,
  redis,
  redisUrl,
  testClient,
  turn,
  uniquePrefix,
} from './redis.fixtures.js';

/** Turn `n` as a reply the platform took in two messages. */
function split(n: number, fields: Partial<NewMessage> = {}): NewMessage {
  const base = turn(n, fields);
  return { ...base, metadata: { ...base.metadata, partMessageIds: [`${n}b`] } };
}

describe.skipIf(redisUrl === undefined)(
  `RedisConversationStore at ${JSON.stringify(redis)}`,
  () => {
    const opened: RedisConversationStore[] = [];
    async function open(options: Parameters<typeof openRedisStore>[0] = {}) {
      const store = await openRedisStore(options);
      opened.push(store);
      return store;
    }
    afterEach(async () => {
      for (const store of opened.splice(0)) {
        await store.close();
        await dropPrefix(store.keyPrefix);
      }
    });
    afterAll(closeTestClient);

    /** The keys a store holds, without its prefix. */
    async function keysOf(store: RedisConversationStore): Promise<string[]> {
      const client = await testClient();
      const keys = await client.keys(`${store.keyPrefix}*`);
      return keys.map((key) => key.slice(store.keyPrefix.length)).sort();
    }

    describe('maxMessagesPerConversation', () => {
      it('keeps the newest turns and forgets the dropped ones entirely', async () => {
        // given a store that keeps three turns per conversation
        const store = await open({ maxMessagesPerConversation: 3 });
        // when five are appended
        for (let i = 1; i <= 5; i++) await store.append(turn(i));
        // then the newest three remain, counted, spanned and searched as such
        expect((await store.get(C1)).map((m) => m.id)).toEqual(['m3', 'm4', 'm5']);
        expect(await store.getConversation(C1)).toMatchObject({
          messageCount: 3,
          firstMessageAt: turn(3).timestamp,
          lastMessageAt: turn(5).timestamp,
        });
        expect((await store.search(C1, 'turn', { limit: 10 })).map((m) => m.id).sort()).toEqual([
          'm3',
          'm4',
          'm5',
        ]);
        expect(await store.search(C1, '1')).toEqual([]);
        // and a late retry of a dropped turn is a new turn (as in the in-memory store)
        expect((await store.append(turn(1))).inserted).toBe(true);
      });

      it('no longer lists the conversation under an author whose turns were all dropped', async () => {
        const store = await open({ maxMessagesPerConversation: 2 });
        const bot = { kind: 'agent' as const, id: 'helper-bot' };
        await store.append(turn(1, { participant: bot }));
        await store.append(turn(2));
        expect((await store.listConversations({ agentId: bot.id })).items).toHaveLength(1);
        await store.append(turn(3));
        expect((await store.listConversations({ participantId: bot.id })).items).toEqual([]);
        expect((await store.listConversations({ agentId: bot.id })).items).toEqual([]);
        const alices = await store.listConversations({ participantId: 'telegram:1001' });
        expect(alices.items.map((c) => c.id)).toEqual([C1]);
      });
    });

    describe('ttlSeconds', () => {
      it('gives every key of a conversation, and the shared sets, the TTL on each append', async () => {
        const store = await open({ ttlSeconds: 600 });
        await store.append(turn(1, { metadata: { ...turn(1).metadata, mentions: ['x'] } }));
        const client = await testClient();
        for (const key of await keysOf(store)) {
          const ttl = await client.ttl(`${store.keyPrefix}${key}`);
          if (key === 'seq' || key === 'conversations') expect(ttl, key).toBe(-1);
          else expect(ttl, key).toBeGreaterThan(590);
        }
      });

      it("starts a conversation's TTL again on a reaction, an edit and a deletion", async () => {
        // given a conversation with 600 s to live, whose keys have 100 s of it left
        const store = await open({ ttlSeconds: 600 });
        await store.append(turn(1, { metadata: { ...turn(1).metadata, mentions: ['x'] } }));
        const client = await testClient();
        // who reacted where stays listed with no TTL: forgetParticipant reads it
        const expiring = async () =>
          (await keysOf(store)).filter(
            (key) => !['seq', 'conversations'].includes(key) && !key.startsWith('reacted:'),
          );
        const ref = { channelType: 'telegram', channelId: '42', messageId: '1' };
        const activity: [string, () => Promise<boolean>][] = [
          [
            'reaction',
            () =>
              store.recordReaction({
                ...ref,
                participantId: 'telegram:1002',
                reaction: '👍',
                at: turn(2).timestamp,
              }),
          ],
          [
            'edit',
            () => store.recordEdit({ ...ref, content: 'edited', editedAt: turn(3).timestamp }),
          ],
          ['deletion', () => store.recordDeletion({ ...ref, deletedAt: turn(4).timestamp })],
        ];
        for (const [what, act] of activity) {
          for (const key of await expiring())
            await client.pExpire(`${store.keyPrefix}${key}`, 100_000);

          // when the only activity is a reaction, an edit or a deletion
          expect(await act(), what).toBe(true);

          // then every key of it has the whole TTL again
          for (const key of await expiring()) {
            expect(
              await client.pTTL(`${store.keyPrefix}${key}`),
              `${what}: ${key}`,
            ).toBeGreaterThan(590_000);
          }
        }
        expect(await expiring()).toContain(`c:${C1}:rx`);
      });

      it('leaves no trace of an expired conversation in what the store answers', async () => {
        // given two conversations, one of which Redis expires
        const store = await open({ ttlSeconds: 600 });
        await store.append(turn(1));
        await store.append(turn(2, { conversationId: 'telegram:43' }));
        const client = await testClient();
        const base = `${store.keyPrefix}c:${C1}:`;
        for (const key of await client.keys(`${base}*`)) await client.pExpire(key, 1);
        await expect.poll(() => client.exists(`${base}info`)).toBe(0);

        // then nothing answers for it, and the shared sets drop it as they meet it
        expect(await store.getConversation(C1)).toBeUndefined();
        expect(await store.get(C1)).toEqual([]);
        expect((await store.listConversations()).items.map((c) => c.id)).toEqual(['telegram:43']);
        const alices = await store.listConversations({ participantId: 'telegram:1001' });
        expect(alices.items.map((c) => c.id)).toEqual(['telegram:43']);
        const edit = { channelType: 'telegram', channelId: '42', messageId: '1' };
        expect(await store.recordEdit({ ...edit, content: 'x', editedAt: turn(3).timestamp })).toBe(
          false,
        );
        expect(await client.zCard(`${store.keyPrefix}conversations`)).toBe(1);
        expect(await client.sMembers(`${store.keyPrefix}participant:telegram:1001`)).toEqual([
          'telegram:43',
        ]);
        // and it starts afresh when its turns come again
        expect((await store.append(turn(1))).inserted).toBe(true);
      });
    });

    describe('keys', () => {
      it('deletes every key of a conversation with it, and of a forgotten participant', async () => {
        const store = await open();
        await store.append(turn(1, { scope: 'dm' }));
        await store.append(split(2, { participant: { kind: 'agent', id: 'bot' } }));
        expect(await store.deleteConversation(C1)).toBe(true);
        expect(await keysOf(store)).toEqual(['seq']);

        await store.append(split(3));
        expect(await store.forgetParticipant('telegram:1001')).toBe(1);
        expect(await keysOf(store)).toEqual(['seq']);
      });

      it('lists split replies among the newest PARTS_WITHIN turns only', async () => {
        // given a split reply, then as many turns stored as the window holds
        const store = await open();
        await store.append(split(1));
        const client = await testClient();
        await client.incrBy(`${store.keyPrefix}seq`, PARTS_WITHIN);

        // when another split reply is stored
        await store.append(split(2));

        // then the list holds the new one alone: it stays as small as the window
        const listed = await client.zRange(`${store.keyPrefix}parts`, 0, -1);
        expect(listed).toEqual([`${String(PARTS_WITHIN + 2).padStart(16, '0')}\0${C1}`]);
      });

      it('keeps two stores with different prefixes apart on one server', async () => {
        const a = await open();
        const b = await open();
        await a.append(turn(1));
        expect(await b.get(C1)).toEqual([]);
        expect((await b.append(turn(1))).inserted).toBe(true);
      });

      it('lets two store objects on one prefix share the conversations (two processes)', async () => {
        const client = await testClient();
        const keyPrefix = uniquePrefix();
        const first = new RedisConversationStore({ client, keyPrefix });
        const second = new RedisConversationStore({ client, keyPrefix });
        opened.push(first);
        await first.append(turn(1));
        expect((await second.append({ ...turn(1), id: 'retry' })).inserted).toBe(false);
        expect((await second.get(C1)).map((m) => m.id)).toEqual(['m1']);
      });

      it('keeps every reaction two store objects on one prefix record on one turn at once', async () => {
        // given two stores on one prefix (two processes) and a stored turn
        const client = await testClient();
        const keyPrefix = uniquePrefix();
        const stores = [0, 1].map(() => new RedisConversationStore({ client, keyPrefix }));
        opened.push(stores[0]!);
        await stores[0]!.append(turn(1));
        const people = Array.from({ length: 20 }, (_, i) => `telegram:${2000 + i}`);

        // when 20 people react to it through both stores at the same time
        const recorded = await Promise.all(
          people.map((participantId, i) =>
            stores[i % 2]!.recordReaction({
              channelType: 'telegram',
              channelId: '42',
              messageId: '1',
              participantId,
              reaction: '👍',
              at: turn(10 + i).timestamp,
            }),
          ),
        );

        // then every reaction is there
        expect(recorded.every(Boolean)).toBe(true);
        const reactions = await stores[1]!.getReactions(C1, 'm1');
        expect(reactions.map((r) => r.participantId).sort()).toEqual(people);
      });
    });

    describe('failures', () => {
      it('reports a lost connection as a transient StoreError', async () => {
        // given a store on a client of its own, whose connection then closes
        const keyPrefix = uniquePrefix();
        const store = await RedisConversationStore.connect({ url: redisUrl, keyPrefix });
        onTestFinished(() => dropPrefix(keyPrefix));
        await store.append(turn(1));
        await store.close();
        // then a call fails, saying trying later can succeed
        const failure = await store.append(turn(2)).catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(StoreError);
        expect((failure as StoreError).transient).toBe(true);
      });

      it('fails to connect to a server that does not answer, at once', async () => {
        const failure = await RedisConversationStore.connect({ url: 'redis://127.0.0.1:1' }).catch(
          (error: unknown) => error,
        );
        expect(failure).toBeInstanceOf(StoreError);
        expect((failure as StoreError).transient).toBe(true);
      });

      it('reports a key of the wrong type under its prefix as a permanent StoreError', async () => {
        const store = await open();
        const client = await testClient();
        await client.set(`${store.keyPrefix}c:${C1}:ids`, 'not a hash');
        const failure = await store.append(turn(1)).catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(StoreError);
        expect((failure as StoreError).message).toMatch(/WRONGTYPE/);
        expect((failure as StoreError).transient).toBe(false);
      });
    });

    describe('search', () => {
      it('ranks the same turns in the same order as the SQLite store', async () => {
        // given one conversation written to both stores
        const store = await open();
        const sqlite = SqliteConversationStore.open(':memory:');
        const corpus = [
          'the refund for order 7 is late',
          'refund refund refund',
          'Café opens at nine; the café is near the station',
          'deploy the build to staging, then deploy to production',
          'a long message about nothing in particular, with a refund somewhere inside it',
          'build failed again',
          'lunch at noon',
          'हिंदी में लिखा संदेश',
          'the order shipped',
        ];
        for (const [i, content] of corpus.entries()) {
          await store.append(turn(i, { content }));
          await sqlite.append(turn(i, { content }));
        }
        // then every query finds the same turns, ranked alike
        for (const query of ['refund', 'cafe order', 'deploy build', 'हिंदी', 'the', 'nothing']) {
          const ours = await store.search(C1, query, { limit: 20, tokenCap: 100_000 });
          const theirs = await sqlite.search(C1, query, { limit: 20, tokenCap: 100_000 });
          expect(
            ours.map((m) => m.id),
            query,
          ).toEqual(theirs.map((m) => m.id));
        }
        await sqlite.close();
      });
    });

    describe('under a Bot', () => {
      class SupportAgent extends BaseAgent {
        name = 'support-agent';
        description = 'Answers questions about orders';
        instructions = 'Be brief.';
        override model = new MockLanguageModelV3({
          doGenerate: async () => answer('Order 4711 ships tomorrow.'),
        });
      }

      it('captures a Telegram DM and the agent reads the previous exchange from it', async () => {
        // given a bot on FakeTelegram whose store is Redis
        const telegram = await FakeTelegram.start();
        const store = await open();
        const agent = new SupportAgent();
        const bot = new Bot({
          channels: [
            new TelegramChannel({ token: telegram.token, client: { apiRoot: telegram.apiRoot } }),
          ],
          agents: [agent],
          store,
          logger: silentLogger,
        });
        await bot.start();
        try {
          // when Ada writes twice
          const ada = { id: 1001, is_bot: false, first_name: 'Ada' };
          const chat = { id: 1001, type: 'private' as const, first_name: 'Ada' };
          telegram.sendUserMessage({ chat, from: ada, text: 'where is my order?' });
          await telegram.waitForSent(1);
          telegram.sendUserMessage({ chat, from: ada, text: 'and the refund?' });
          await telegram.waitForSent(2);
          await bot.stop();

          // then both exchanges are in Redis, and the second prompt held the first exchange
          const turns = await store.get('telegram:1001');
          expect(turns.map((m) => [m.participant.id, m.content])).toEqual([
            ['telegram:1001', 'where is my order?'],
            ['support-agent', 'Order 4711 ships tomorrow.'],
            ['telegram:1001', 'and the refund?'],
            ['support-agent', 'Order 4711 ships tomorrow.'],
          ]);
          const calls = (agent.model as MockLanguageModelV3).doGenerateCalls;
          expect(JSON.stringify(calls[1]?.prompt)).toContain('where is my order?');
        } finally {
          await bot.stop();
          await telegram.close();
        }
      });
    });
  },
);
