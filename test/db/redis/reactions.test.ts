import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { RedisConversationStore, type RedisCommander } from 'colloquy/redis';
import {
  C1,
  closeTestClient,
  dropPrefix,
  redis,
  redisUrl,
  testClient,
  turn,
  twoStoresOn,
  uniquePrefix,
} from './redis.fixtures.js';

/** `participantId` puts `reaction` on the platform message of turn `n`. */
function reaction(participantId: string, reaction: string, n = 1) {
  return {
    channelType: 'telegram',
    channelId: '42',
    messageId: `${n}`,
    participantId,
    reaction,
    at: new Date(Date.UTC(2026, 0, 1, 0, 1, 0)).toISOString(),
  };
}

/** Whether a command reads a conversation's reactions (`HGET <…>:rx <turn id>`). */
const readsReactions = (args: string[]) => args[0] === 'HGET' && args[1]!.endsWith(':rx');

/**
 * A client that runs `hook` once (another writer getting in), just before the first command
 * `pick` picks out, or with `after`, just before the command that follows it.
 */
function interleaved(
  client: RedisCommander,
  pick: (args: string[]) => boolean,
  hook: () => Promise<unknown>,
  after = false,
): RedisCommander {
  let state: 'waiting' | 'next' | 'fired' = 'waiting';
  return {
    async sendCommand(args) {
      if (state === 'next' || (state === 'waiting' && !after && pick(args))) {
        state = 'fired';
        await hook();
      } else if (state === 'waiting' && pick(args)) {
        state = 'next';
      }
      return client.sendCommand(args);
    },
  };
}

describe.skipIf(redisUrl === undefined)(`Redis reactions at ${JSON.stringify(redis)}`, () => {
  const prefixes: string[] = [];
  afterEach(async () => {
    for (const prefix of prefixes.splice(0)) await dropPrefix(prefix);
  });
  afterAll(closeTestClient);

  const twoStores = twoStoresOn(prefixes);

  it('keeps a reaction someone records on a turn while another person is forgotten', async () => {
    // given Bob's reaction on a turn, and Carol reacting to it while Bob's is being taken off
    const { store, other } = await twoStores((client, other) =>
      interleaved(
        client,
        readsReactions,
        () => other.recordReaction(reaction('telegram:3003', '🎉')),
        true,
      ),
    );
    await other.append(turn(1));
    expect(await other.recordReaction(reaction('telegram:2002', '👍'))).toBe(true);

    // when Bob is forgotten
    await store.forgetParticipant('telegram:2002');

    // then Carol's reaction stays and Bob's is gone
    const reactions = await other.getReactions(C1, 'm1');
    expect(reactions.map((r) => [r.participantId, r.reaction])).toEqual([['telegram:3003', '🎉']]);
  });

  it('records nothing for a reaction whose conversation is deleted meanwhile', async () => {
    // given a turn whose conversation another writer deletes while a reaction on it is recorded
    const { store, keys } = await twoStores((client, other) =>
      interleaved(client, readsReactions, () => other.deleteConversation(C1)),
    );
    await store.append(turn(1));

    // when the reaction is recorded
    const recorded = await store.recordReaction(reaction('telegram:2002', '👍'));

    // then it answers as for an unknown turn, and no key of the conversation or the person stays
    expect(recorded).toBe(false);
    expect(await keys()).toEqual(['seq']);
  });

  it('records nothing for a reaction whose turn is deleted meanwhile', async () => {
    // given two turns, the first of which another writer deletes while a reaction on it is recorded
    const { store, other, keys } = await twoStores((client, other) =>
      interleaved(client, readsReactions, () => other.deleteMessages(C1, ['m1'])),
    );
    await store.append(turn(1));
    await store.append(turn(2));

    // when the reaction is recorded
    const recorded = await store.recordReaction(reaction('telegram:2002', '👍'));

    // then it answers as for an unknown turn, and the turn stored again under its id has none
    expect(recorded).toBe(false);
    expect(await keys()).not.toContain('reacted:telegram:2002');
    expect((await other.append(turn(1))).inserted).toBe(true);
    expect(await other.getReactions(C1, 'm1')).toEqual([]);
  });

  it('gives the split-reply list of a TTL store the TTL its conversations have', async () => {
    // given a TTL store holding a reply split into two messages
    const client = await testClient();
    const keyPrefix = uniquePrefix();
    prefixes.push(keyPrefix);
    const store = new RedisConversationStore({ client, keyPrefix, ttlSeconds: 600 });
    const first = turn(1);
    await store.append({ ...first, metadata: { ...first.metadata, partMessageIds: ['1b'] } });

    // then the list of split replies expires with the conversation renewed last
    expect(await client.pTTL(`${keyPrefix}parts`)).toBeGreaterThan(590_000);

    // and once the conversation expired, its reply is found by no part
    for (const key of await client.keys(`${keyPrefix}c:*`)) await client.pExpire(key, 1);
    await expect.poll(() => client.exists(`${keyPrefix}c:${C1}:info`)).toBe(0);
    const part = { channelType: 'telegram', channelId: '42', messageId: '1b' };
    expect(await store.findByPlatformRef(part)).toBeUndefined();
    expect(await store.recordReaction({ ...reaction('telegram:2002', '👍'), ...part })).toBe(false);
  });
});
