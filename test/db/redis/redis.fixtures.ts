import { inject } from 'vitest';
import { createClient } from 'redis';
import {
  RedisConversationStore,
  type RedisCommander,
  type RedisStoreOptions,
} from 'colloquy/redis';
import type { NewMessage } from '../../../src/types.js';

/** The test Redis's URL, or why there is none (outside CI; under CI setup failed instead). */
export const redis = inject('redis');
export const redisUrl = 'url' in redis ? redis.url : undefined;

let stores = 0;
const run = `colloquy-test:${process.pid}:${Date.now().toString(36)}`;

/** A key prefix no other test file, run or store uses. */
export function uniquePrefix(): string {
  return `${run}:${++stores}:`;
}

/** One client per test file, connected on first use. */
let shared: ReturnType<typeof createClient> | undefined;
export async function testClient(): Promise<ReturnType<typeof createClient>> {
  if (shared === undefined) {
    shared = createClient({ url: redisUrl });
    shared.on('error', () => undefined);
    await shared.connect();
  }
  return shared;
}

/** A store over a fresh prefix of the test Redis. */
export async function openRedisStore(
  options: Omit<RedisStoreOptions, 'client'> = {},
): Promise<RedisConversationStore> {
  const client = await testClient();
  return new RedisConversationStore({ keyPrefix: uniquePrefix(), ...options, client });
}

/** Every key under a prefix, deleted (a store's keys after its test). */
export async function dropPrefix(prefix: string): Promise<void> {
  const client = await testClient();
  for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
    if (keys.length > 0) await client.unlink(keys);
  }
}

/**
 * Two store objects on one fresh prefix (two processes), the first talking through `wrap`;
 * the prefix goes into `prefixes` for the test to drop. `keys` lists the prefix's keys.
 */
export function twoStoresOn(prefixes: string[]) {
  return async (
    wrap: (client: RedisCommander, other: RedisConversationStore) => RedisCommander,
  ) => {
    const client = await testClient();
    const keyPrefix = uniquePrefix();
    prefixes.push(keyPrefix);
    const other = new RedisConversationStore({ client, keyPrefix });
    const store = new RedisConversationStore({ client: wrap(client, other), keyPrefix });
    const keys = async () =>
      (await client.keys(`${keyPrefix}*`)).map((key) => key.slice(keyPrefix.length)).sort();
    return { store, other, keys };
  };
}

export async function closeTestClient(): Promise<void> {
  shared?.destroy();
  shared = undefined;
}

export const C1 = 'telegram:42';

/** Turn `n` of Alice in conversation C1, a second after turn `n - 1`. */
export function turn(n: number, fields: Partial<NewMessage> = {}): NewMessage {
  return {
    id: `m${n}`,
    conversationId: C1,
    participant: { kind: 'user', id: 'telegram:1001', displayName: 'Alice' },
    content: `turn number ${n}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    scope: 'channel',
    metadata: { channelType: 'telegram', channelId: '42', messageId: `${n}`, mentions: [] },
    ...fields,
  };
}
