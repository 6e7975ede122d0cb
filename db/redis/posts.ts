import type { NewPost, PostQueue, PostStatus, ScheduledPost } from '../../src/posts.js';
import { dueTimeOf } from '../../src/posts.js';
import { type RedisCommander, Script } from './scripts.js';

/**
 * Stores a post once (`ARGV[3]` its id, `ARGV[4]` its JSON, `ARGV[5]` when due in ms), due in
 * `<base>:due`; claimed for `ARGV[6]` (`ARGV[7]` ms) when a holder is given.
 */
const SCHEDULE = new Script(`
local id, json, due, holder, ttl = ARGV[3], ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7])
if redis.call('HSETNX', base, id, json) == 0 then return 0 end
redis.call('ZADD', base .. ':due', due, id)
if holder ~= '' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('HSET', base .. ':claims', id, (now + ttl) .. ':' .. holder)
end
return 1`);

/**
 * Claims up to `ARGV[5]` due posts for `ARGV[3]` for `ARGV[4]` ms, oldest due first, whose
 * claim is free or expired (`ARGV[6]` = '1': whoever holds them), on the server's clock; one
 * script, so two instances never claim one post. Answers the ids and the claim's end in ms.
 */
const CLAIM = new Script(`
local holder, ttl, limit, takeOver = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local claimed = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', base .. ':due', '-inf', now)) do
  if #claimed >= limit then break end
  local claim = redis.call('HGET', base .. ':claims', id)
  local untilMs = claim and tonumber(string.match(claim, '^(%d+):')) or 0
  if takeOver == '1' or untilMs <= now then
    redis.call('HSET', base .. ':claims', id, (now + ttl) .. ':' .. holder)
    claimed[#claimed + 1] = id
  end
end
return {tostring(now + ttl), claimed}`);

/** Extends to `ARGV[4]` ms from now every claim `ARGV[3]` holds; answers how many. */
const RENEW = new Script(`
local holder, ttl = ARGV[3], tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local claims = redis.call('HGETALL', base .. ':claims')
local renewed = 0
for i = 1, #claims, 2 do
  if string.match(claims[i + 1], '^%d+:(.*)$') == holder then
    redis.call('HSET', base .. ':claims', claims[i], (now + ttl) .. ':' .. holder)
    renewed = renewed + 1
  end
end
return renewed`);

/** Ends a post (`ARGV[3]`): its JSON replaced by `ARGV[4]`, no longer due, its claim dropped. */
const FINISH = new Script(`
local id = ARGV[3]
if redis.call('HEXISTS', base, id) == 0 then return 0 end
redis.call('HSET', base, id, ARGV[4])
redis.call('ZREM', base .. ':due', id)
redis.call('HDEL', base .. ':claims', id)
return 1`);

/**
 * The Redis store's post queue: `<prefix>posts` (hash: id → the post as JSON),
 * `<prefix>posts:due` (zset of the pending, scored by when due in ms) and
 * `<prefix>posts:claims` (hash: id → `<claimed until in ms>:<holder>`).
 *
 * @example
 * ```ts
 * const queue = new RedisPostQueue(client, 'colloquy:');
 * await queue.schedulePost(post);
 * ```
 */
export class RedisPostQueue implements PostQueue {
  readonly #client: RedisCommander;
  readonly #prefix: string;
  readonly #base: string;

  constructor(client: RedisCommander, prefix: string) {
    this.#client = client;
    this.#prefix = prefix;
    this.#base = `${prefix}posts`;
  }

  async schedulePost(post: NewPost, claim?: { holder: string; ttlMs: number }): Promise<void> {
    const dueAt = dueTimeOf(post.dueAt);
    const stored = { ...post, dueAt, status: 'pending', createdAt: new Date().toISOString() };
    await this.#run(SCHEDULE, [
      post.id,
      JSON.stringify(stored),
      String(Date.parse(dueAt)),
      claim?.holder ?? '',
      String(claim?.ttlMs ?? 0),
    ]);
  }

  async claimDuePosts(
    holder: string,
    ttlMs: number,
    options: { limit?: number; takeOver?: boolean } = {},
  ): Promise<ScheduledPost[]> {
    const { limit = 50, takeOver = false } = options;
    const [until, ids] = (await this.#run(CLAIM, [
      holder,
      String(ttlMs),
      String(limit),
      takeOver ? '1' : '0',
    ])) as [string, string[]];
    const claimedUntil = new Date(Number(until)).toISOString();
    const posts = await this.#read(ids);
    return posts.map((post) => ({ ...post, claimedBy: holder, claimedUntil }));
  }

  async renewPostClaims(holder: string, ttlMs: number): Promise<number> {
    return Number(await this.#run(RENEW, [holder, String(ttlMs)]));
  }

  async finishPost(id: string, status: Exclude<PostStatus, 'pending'>, error?: string) {
    const [post] = await this.#read([id]);
    if (post === undefined) return;
    const { claimedBy: _, claimedUntil: __, ...rest } = post;
    await this.#run(FINISH, [id, JSON.stringify({ ...rest, status, ...(error && { error }) })]);
  }

  async getPosts(query: { statuses?: readonly PostStatus[] } = {}): Promise<ScheduledPost[]> {
    const all = (await this.#client.sendCommand(['HVALS', this.#base])) as string[];
    const claims = await this.#claims();
    return all
      .map((json) => withClaim(JSON.parse(json) as ScheduledPost, claims))
      .filter((post) => query.statuses === undefined || query.statuses.includes(post.status))
      .sort((a, b) => (a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : a.id < b.id ? -1 : 1));
  }

  async #read(ids: readonly string[]): Promise<ScheduledPost[]> {
    if (ids.length === 0) return [];
    const found = (await this.#client.sendCommand(['HMGET', this.#base, ...ids])) as (
      string | null
    )[];
    return found.flatMap((json) => (json === null ? [] : [JSON.parse(json) as ScheduledPost]));
  }

  async #claims(): Promise<Map<string, string>> {
    const flat = (await this.#client.sendCommand(['HGETALL', `${this.#base}:claims`])) as
      string[] | Record<string, string>;
    const pairs = Array.isArray(flat)
      ? Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i]!, flat[2 * i + 1]!])
      : Object.entries(flat);
    return new Map(pairs as [string, string][]);
  }

  #run(script: Script, args: string[]): Promise<unknown> {
    return script.run(this.#client, this.#base, [this.#prefix, '', ...args]);
  }
}

/** A post with its claim (`<until ms>:<holder>`), when it has one. */
function withClaim(post: ScheduledPost, claims: Map<string, string>): ScheduledPost {
  const claim = claims.get(post.id);
  const match = claim === undefined ? null : /^(\d+):(.*)$/.exec(claim);
  if (match === null) return post;
  const claimedUntil = new Date(Number(match[1])).toISOString();
  return { ...post, claimedBy: match[2]!, claimedUntil };
}
