/// <reference types="node" preserve="true" />
/**
 * `colloquy/redis`: a conversation store on Redis 7, for teams that keep chat state in
 * Redis. Needs the optional peer dependency `redis` (node-redis) when it connects a client
 * itself.
 *
 * @example
 * ```ts
 * import { RedisConversationStore } from 'colloquy/redis';
 * const store = await RedisConversationStore.connect({ url: 'redis://127.0.0.1:6379' });
 * ```
 */
export { RedisConversationStore, type RedisCommander, type RedisStoreOptions } from './store.js';
