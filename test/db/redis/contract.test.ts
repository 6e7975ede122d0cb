import { afterAll, describe } from 'vitest';
import type { RedisConversationStore } from 'colloquy/redis';
import { describeStoreContract } from '../../contracts/store-contract.js';
import { closeTestClient, dropPrefix, openRedisStore, redis, redisUrl } from './redis.fixtures.js';

describe.skipIf(redisUrl === undefined)(`Redis at ${JSON.stringify(redis)}`, () => {
  afterAll(closeTestClient);

  describeStoreContract(
    'RedisConversationStore',
    () => openRedisStore(),
    async (store) => {
      await store.close?.();
      await dropPrefix((store as RedisConversationStore).keyPrefix);
    },
  );
});
