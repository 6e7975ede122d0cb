import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RedisCommander } from 'colloquy/redis';
import type { NewMessage } from '../../../src/types.js';
import {
  C1,
  closeTestClient,
  dropPrefix,
  redis,
  redisUrl,
  turn,
  twoStoresOn,
} from './redis.fixtures.js';

const ALICE = 'telegram:1001';

/** Whether a command runs the FORGET script for Alice in delete mode. */
const forgetsAlice = (args: string[]) =>
  args[0]!.startsWith('EVAL') && args.at(-2) === ALICE && args.at(-1) === 'delete';

/** A client that runs `hook` once (another writer getting in), just after the first command `pick` picks out. */
function afterFirst(
  client: RedisCommander,
  pick: (args: string[]) => boolean,
  hook: () => Promise<unknown>,
): RedisCommander {
  let fired = false;
  return {
    async sendCommand(args) {
      const reply = await client.sendCommand(args);
      if (!fired && pick(args)) {
        fired = true;
        await hook();
      }
      return reply;
    },
  };
}

/** Alice's turn `n` in conversation telegram:43. */
function elsewhere(n: number): NewMessage {
  const base = turn(n);
  return {
    ...base,
    conversationId: 'telegram:43',
    metadata: { ...base.metadata, channelId: '43' },
  };
}

describe.skipIf(redisUrl === undefined)(`Redis forget at ${JSON.stringify(redis)}`, () => {
  const prefixes: string[] = [];
  afterEach(async () => {
    for (const prefix of prefixes.splice(0)) await dropPrefix(prefix);
  });
  afterAll(closeTestClient);

  const twoStores = twoStoresOn(prefixes);

  it('forgets a turn the person writes in another conversation while being forgotten', async () => {
    // given Alice's turn in C1, and Alice writing in another conversation once C1 is forgotten
    const { store, other, keys } = await twoStores((client, other) =>
      afterFirst(client, forgetsAlice, () => other.append(elsewhere(2))),
    );
    await other.append(turn(1));

    // when Alice is forgotten
    const count = await store.forgetParticipant(ALICE);

    // then both turns are gone, with every key of hers
    expect(count).toBe(2);
    expect(await other.get('telegram:43')).toEqual([]);
    expect(await keys()).toEqual(['seq']);
  });

  it('forgets a turn the person writes again where they were forgotten already', async () => {
    // given Alice's turn in C1, and Alice writing there again once C1 is forgotten
    const { store, other, keys } = await twoStores((client, other) =>
      afterFirst(client, forgetsAlice, () => other.append(turn(2))),
    );
    await other.append(turn(1));

    // when Alice is forgotten
    const count = await store.forgetParticipant(ALICE);

    // then both turns are gone, with every key of hers
    expect(count).toBe(2);
    expect(await other.get(C1)).toEqual([]);
    expect(await keys()).toEqual(['seq']);
  });

  it('keeps a conversation listed for a later forget while a turn of the person is left there', async () => {
    // given Alice writing in another conversation after every forget of hers in this store
    const { store, other } = await twoStores((client, other) => {
      let n = 1;
      return {
        async sendCommand(args) {
          const reply = await client.sendCommand(args);
          if (forgetsAlice(args)) await other.append(elsewhere(++n));
          return reply;
        },
      };
    });
    await other.append(turn(1));

    // when Alice is forgotten through that store, then once more
    await store.forgetParticipant(ALICE);
    expect((await other.get('telegram:43')).length).toBe(1);
    await other.forgetParticipant(ALICE);

    // then the turn left behind is found and forgotten
    expect(await other.get('telegram:43')).toEqual([]);
  });
});
