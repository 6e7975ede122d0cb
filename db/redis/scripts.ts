import { createHash } from 'node:crypto';
import { PARTS_WITHIN } from '../../src/store.js';
import { PARTS, SEQ_DIGITS } from './keys.js';

/**
 * What the store needs of a Redis client: one call that sends a command and resolves to its
 * reply. A node-redis client (`createClient()` from `redis`) is one as it is.
 *
 * @example
 * ```ts
 * const reply = await client.sendCommand(['PING']); // 'PONG'
 * ```
 */
export interface RedisCommander {
  sendCommand(args: string[]): Promise<unknown>;
}

/**
 * A Lua script run by its SHA1 (`EVALSHA`), sent whole (`EVAL`) the first time a server has
 * not seen it. Each script runs atomically: that is what makes an append's duplicate check
 * and its indexing one step.
 */
export class Script {
  readonly #source: string;
  readonly #sha: string;

  constructor(body: string) {
    this.#source = `${PRELUDE}\n${body}`;
    this.#sha = createHash('sha1').update(this.#source).digest('hex');
  }

  async run(client: RedisCommander, key: string, args: string[]): Promise<unknown> {
    try {
      return await client.sendCommand(['EVALSHA', this.#sha, '1', key, ...args]);
    } catch (error) {
      if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
      return client.sendCommand(['EVAL', this.#source, '1', key, ...args]);
    }
  }
}

/**
 * Shared by every script. KEYS[1] is the conversation's base key, ARGV[1] the store's key
 * prefix and ARGV[2] the conversation id.
 */
const PRELUDE = `
local base, prefix, cid = KEYS[1], ARGV[1], ARGV[2]
local PARTS = {${PARTS.map((part) => `'${part}'`).join(', ')}}
local function key(part) return base .. part end
local function pad(seq) return string.format('%0${SEQ_DIGITS}d', seq) end
local function seqOf(member) return string.format('%d', tonumber(string.sub(member, -${SEQ_DIGITS}))) end
local function timeOf(stamp) return string.sub(stamp, 1, -${SEQ_DIGITS + 2}) end

-- ZADD (at score 0) or ZREM many members, a few hundred per call.
local function each(command, k, list)
  local i = 1
  while i <= #list do
    local args = {}
    for j = i, math.min(i + 499, #list) do
      if command == 'ZADD' then args[#args + 1] = 0 end
      args[#args + 1] = list[j]
    end
    redis.call(command, k, unpack(args))
    i = i + 500
  end
end

-- A turn's members in order, ix and words (see keys.ts).
local function members(seq, refs)
  local p = pad(seq)
  local stamp = refs.ts .. ':' .. p
  local ix, words = {}, {}
  for i, parts in ipairs(refs.ix) do ix[i] = table.concat(parts, '\\0') .. '\\0' .. stamp end
  for i, w in ipairs(refs.w) do words[i] = w .. '\\0' .. p end
  return stamp, ix, words
end

-- The store's replies split into parts, by seq: only the newest ${PARTS_WITHIN} seqs stay listed.
local PARTS_LIST = prefix .. 'parts'
local function listParts(seq)
  redis.call('ZADD', PARTS_LIST, 0, pad(seq) .. '\0' .. cid)
  local oldest = math.max(0, tonumber(redis.call('GET', prefix .. 'seq')) - ${PARTS_WITHIN} + 1)
  redis.call('ZREMRANGEBYLEX', PARTS_LIST, '-', '(' .. pad(oldest))
end

-- The conversation's replies leave the list (a bounded read: the list is).
local function unlistParts()
  for _, member in ipairs(redis.call('ZRANGE', PARTS_LIST, '-', '+', 'BYLEX')) do
    if string.sub(member, ${SEQ_DIGITS + 2}) == cid then redis.call('ZREM', PARTS_LIST, member) end
  end
end

local function index(seq, refs)
  local stamp, ix, words = members(seq, refs)
  redis.call('ZADD', key('order'), 0, stamp)
  each('ZADD', key('ix'), ix)
  each('ZADD', key('words'), words)
  if refs.p then listParts(seq) end
end

local function unindex(seq, refs)
  local stamp, ix, words = members(seq, refs)
  redis.call('ZREM', key('order'), stamp)
  each('ZREM', key('ix'), ix)
  each('ZREM', key('words'), words)
  if refs.p then redis.call('ZREM', PARTS_LIST, pad(seq) .. '\0' .. cid) end
end

-- Removes one turn (by seq, a string) with everything that points at it; its refs, or nil.
local function drop(seq)
  local raw = redis.call('HGET', key('refs'), seq)
  if not raw then return nil end
  local refs = cjson.decode(raw)
  unindex(tonumber(seq), refs)
  if redis.call('HGET', key('ids'), refs.id) == seq then
    redis.call('HDEL', key('ids'), refs.id)
    redis.call('HDEL', key('rx'), refs.id)
  end
  if refs.pm ~= '' and redis.call('HGET', key('pm'), refs.pm) == seq then
    redis.call('HDEL', key('pm'), refs.pm)
  end
  redis.call('HDEL', key('msgs'), seq)
  redis.call('HDEL', key('refs'), seq)
  redis.call('HINCRBY', key('info'), 'count', -1)
  return refs
end

-- After turns went: whoever has no turn left here is no longer listed as writing here.
-- \`authors\` is keyed by the dropped turns' authors: refs.ix[1] is a turn's {'by', author} lane.
local function unlistGone(authors)
  for author in pairs(authors) do
    local lane = 'by\\0' .. author .. '\\0'
    if not redis.call('ZRANGE', key('ix'), '[' .. lane, '(' .. lane .. '\\255', 'BYLEX', 'LIMIT', 0, 1)[1] then
      redis.call('SREM', key('authors'), author)
      redis.call('SREM', prefix .. 'participant:' .. author, cid)
      redis.call('SREM', prefix .. 'agent:' .. author, cid)
    end
  end
end

-- Moves the conversation in the shared list from one last-activity time to another.
local function relist(old, new)
  local list = prefix .. 'conversations'
  if old then redis.call('ZREM', list, old .. '\\0' .. cid) end
  if new then redis.call('ZADD', list, 0, new .. '\\0' .. cid) end
end

-- After turns went: the conversation spans the turns that remain (kept as is when none do).
local function respan()
  local info = key('info')
  local first = redis.call('ZRANGE', key('order'), '-', '+', 'BYLEX', 'LIMIT', 0, 1)[1]
  local last = redis.call('ZRANGE', key('order'), '+', '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
  if first then redis.call('HSET', info, 'first', timeOf(first)) end
  if last then
    local old = redis.call('HGET', info, 'last')
    if old ~= timeOf(last) then
      relist(old, timeOf(last))
      redis.call('HSET', info, 'last', timeOf(last))
    end
  end
end

-- Calls command (SREM, EXPIRE) with arg on each shared set that lists the conversation for
-- someone who wrote in it or was named in it.
local function personSets(command, arg)
  for _, who in ipairs(redis.call('SMEMBERS', key('authors'))) do
    redis.call(command, prefix .. 'participant:' .. who, arg)
    redis.call(command, prefix .. 'agent:' .. who, arg)
  end
  for _, who in ipairs(redis.call('SMEMBERS', key('named'))) do
    redis.call(command, prefix .. 'named:' .. who, arg)
  end
end

-- Deletes the whole conversation and its entries in the shared keys; 0 when there was none.
local function remove()
  local place = redis.call('HMGET', key('info'), 'last', 'channelKey')
  if not place[1] then return 0 end
  relist(place[1], nil)
  if place[2] then redis.call('SREM', place[2], cid) end
  personSets('SREM', cid)
  unlistParts()
  for _, part in ipairs(PARTS) do redis.call('DEL', key(part)) end
  return 1
end

-- With a TTL, keys a write created take the time the conversation has left.
local function align()
  local left = redis.call('PTTL', key('info'))
  if left > 0 then
    for _, part in ipairs(PARTS) do redis.call('PEXPIRE', key(part), left) end
  end
end

-- With a TTL (seconds), the conversation lives that long from now: its keys, its channel's set
-- and the sets that find it for whoever wrote or was named in it (forgetParticipant must find
-- them for as long as the turns live). The shared parts list lives as long as the conversation
-- renewed last, so it goes once every conversation it names has expired.
local function renew(ttl)
  for _, part in ipairs(PARTS) do redis.call('EXPIRE', key(part), ttl) end
  redis.call('EXPIRE', PARTS_LIST, ttl)
  local channelKey = redis.call('HGET', key('info'), 'channelKey')
  if channelKey then redis.call('EXPIRE', channelKey, ttl) end
  personSets('EXPIRE', ttl)
end

-- Drops up to two members of a shared set (or the oldest two of the list) whose
-- conversation expired: with a TTL, they would otherwise stay for ever.
local function sweep(set)
  local ids = redis.call('SRANDMEMBER', set, 2)
  for _, id in ipairs(ids) do
    if redis.call('EXISTS', prefix .. 'c:' .. id .. ':info') == 0 then redis.call('SREM', set, id) end
  end
end
local function sweepList()
  local list = prefix .. 'conversations'
  for _, member in ipairs(redis.call('ZRANGE', list, '-', '+', 'BYLEX', 'LIMIT', 0, 2)) do
    local id = string.sub(member, string.find(member, '\\0', 1, true) + 1)
    if redis.call('EXISTS', prefix .. 'c:' .. id .. ':info') == 0 then redis.call('ZREM', list, member) end
  end
end
`;

/**
 * Appends a turn unless its id or platform message is stored: `{1, seq, refused}`, or
 * `{0, seq, json}` for the stored one. ARGV: prefix, conversation id, id, platform field,
 * timestamp, JSON, refs JSON, place JSON, author, TTL seconds (0: none), cap (0: none), the
 * author's kind, and for a press that uses a message's `once` buttons that message's id (else
 * empty) with the JSON and refs JSON it is stored as (refused, 1) when another press used them.
 */
export const APPEND = new Script(`
local id, pm, ts, author = ARGV[3], ARGV[4], ARGV[5], ARGV[9]
local ttl, cap, agent = tonumber(ARGV[10]), tonumber(ARGV[11]), ARGV[12] == 'agent'
local created = redis.call('HGET', key('info'), 'count') == '0'
local existing = redis.call('HGET', key('ids'), id)
if not existing and pm ~= '' then existing = redis.call('HGET', key('pm'), pm) end
if existing then return {0, existing, redis.call('HGET', key('msgs'), existing)} end
local refused = 0
if ARGV[13] ~= '' then
  local holder = redis.call('HGET', key('used'), ARGV[13])
  if not holder then redis.call('HSET', key('used'), ARGV[13], id)
  elseif holder ~= id then refused, ARGV[6], ARGV[7] = 1, ARGV[14], ARGV[15] end
end

local seq = redis.call('INCR', prefix .. 'seq')
local s = string.format('%d', seq)
redis.call('HSET', key('msgs'), s, ARGV[6])
redis.call('HSET', key('refs'), s, ARGV[7])
redis.call('HSET', key('ids'), id, s)
if pm ~= '' then redis.call('HSET', key('pm'), pm, s) end
local refs = cjson.decode(ARGV[7])
index(seq, refs)
redis.call('SADD', key('authors'), author)
for _, parts in ipairs(refs.ix) do
  if parts[1] == 're' or parts[1] == 'at' then
    redis.call('SADD', key('named'), parts[2])
    redis.call('SADD', prefix .. 'named:' .. parts[2], cid)
  end
end

local place = cjson.decode(ARGV[8])
local info = key('info')
if redis.call('EXISTS', info) == 0 then
  redis.call('HSET', info, 'channelType', place.channelType, 'channelId', place.channelId,
    'scope', place.scope, 'channelKey', place.channelKey, 'first', ts, 'last', ts, 'count', 0)
  if place.threadId then redis.call('HSET', info, 'threadId', place.threadId) end
  relist(nil, ts)
  if ttl > 0 then sweepList() end
else
  local span = redis.call('HMGET', info, 'first', 'last')
  -- a conversation created empty spans its creation time until its first turn
  if created then span = {ts, span[2]} end
  if ts < span[1] or created then redis.call('HSET', info, 'first', ts) end
  if ts > span[2] or created then
    relist(span[2], ts)
    redis.call('HSET', info, 'last', ts)
  end
  if place.threadId and redis.call('HEXISTS', info, 'threadId') == 0 then
    redis.call('HSET', info, 'threadId', place.threadId)
  end
end
if place.channelName then redis.call('HSET', info, 'channelName', place.channelName) end
local count = redis.call('HINCRBY', info, 'count', 1)

local authorKey = prefix .. 'participant:' .. author
local newToChannel = redis.call('SADD', place.channelKey, cid) == 1
local newToAuthor = redis.call('SADD', authorKey, cid) == 1
if agent then redis.call('SADD', prefix .. 'agent:' .. author, cid) end

if cap > 0 and count > cap then
  local authors = {}
  while count > cap do
    local refs = drop(seqOf(redis.call('ZRANGE', key('order'), '-', '+', 'BYLEX', 'LIMIT', 0, 1)[1]))
    if refs then authors[refs.ix[1][2]] = true end
    count = count - 1
  end
  respan()
  unlistGone(authors)
end

if ttl > 0 then
  if newToChannel then sweep(place.channelKey) end
  if newToAuthor then sweep(authorKey) end
  renew(ttl)
end
return {1, s, refused}
`);

/**
 * Replaces one stored turn's JSON and refs if it is still `old` (an edit, a deletion, a
 * redaction computed by the caller): 1, or 0 when it changed or went meanwhile. ARGV: prefix,
 * conversation id, seq, old JSON, new JSON, new refs JSON, TTL seconds to renew the
 * conversation by (0: it keeps the time it has left).
 */
export const REPLACE = new Script(`
local seq, ttl = ARGV[3], tonumber(ARGV[7])
if redis.call('HGET', key('msgs'), seq) ~= ARGV[4] then return 0 end
unindex(tonumber(seq), cjson.decode(redis.call('HGET', key('refs'), seq)))
index(tonumber(seq), cjson.decode(ARGV[6]))
redis.call('HSET', key('msgs'), seq, ARGV[5])
redis.call('HSET', key('refs'), seq, ARGV[6])
if ttl > 0 then renew(ttl) else align() end
return 1
`);

/**
 * Replaces one turn's reactions if they are still `old` (computed by the caller, '' when there
 * were none; a new '' deletes them), lists the conversation under the person who reacted (a
 * reacted key of '' lists it nowhere) and renews it: 1, or 0 when they changed meanwhile, or
 * -1 when the turn is gone (its reactions go with it; nothing is written). ARGV: prefix,
 * conversation id, turn id, old JSON, new JSON, reacted key, TTL seconds (0: none).
 */
export const REACT = new Script(`
local id, ttl = ARGV[3], tonumber(ARGV[7])
if not redis.call('HGET', key('ids'), id) then
  redis.call('HDEL', key('rx'), id)
  return -1
end
if (redis.call('HGET', key('rx'), id) or '') ~= ARGV[4] then return 0 end
if ARGV[6] ~= '' then redis.call('SADD', ARGV[6], cid) end
if ARGV[5] == '' then redis.call('HDEL', key('rx'), id) else redis.call('HSET', key('rx'), id, ARGV[5]) end
if ttl > 0 then renew(ttl) end
return 1
`);

/** Deletes turns by colloquy id; how many went. ARGV: prefix, conversation id, ids…. */
export const DELETE_MESSAGES = new Script(`
local count, authors = 0, {}
for i = 3, #ARGV do
  local seq = redis.call('HGET', key('ids'), ARGV[i])
  local refs = seq and drop(seq)
  if refs then
    count = count + 1
    authors[refs.ix[1][2]] = true
  end
end
if count > 0 then
  respan()
  unlistGone(authors)
end
return count
`);

/** Deletes a conversation: 1, or 0 when there was none. ARGV: prefix, conversation id. */
export const DELETE_CONVERSATION = new Script(`return remove()`);

/**
 * Forgets a participant in one conversation: every rolling summary goes, and with `delete`
 * their turns too (the conversation goes when nothing remains); returns how many of their
 * turns (not summaries) went. With `redact` the caller has blanked their turns already.
 * The conversation leaves the person's sets in the same step once no turn of theirs remains
 * (with `delete`, unless they wrote again since; with `redact`, their blanked turns keep it
 * listed so a later forget finds them). ARGV: prefix, conversation id, participant id, mode.
 */
export const FORGET = new Script(`
local who, mode = ARGV[3], ARGV[4]
local count = 0
if mode == 'delete' then
  local theirs = redis.call('ZRANGE', key('ix'), '(by\\0' .. who .. '\\1', '[by\\0' .. who .. '\\0', 'BYLEX', 'REV')
  for _, member in ipairs(theirs) do
    local refs = drop(seqOf(member))
    if refs and not refs.s then count = count + 1 end
  end
end
unlistGone({[who] = true})
for _, member in ipairs(redis.call('ZRANGE', key('ix'), '(sum\\1', '[sum\\0', 'BYLEX', 'REV')) do
  drop(seqOf(member))
end
if tonumber(redis.call('HGET', key('info'), 'count') or '0') <= 0 then
  remove()
else
  respan()
end
return count
`);

/**
 * Creates an empty conversation: 1, or 0 when the id is taken. ARGV: prefix, conversation
 * id, place JSON (with title and metadata JSON), now, TTL seconds (0: none).
 */
export const CREATE_CONVERSATION = new Script(`
local info = key('info')
if redis.call('EXISTS', info) == 1 then return 0 end
local place, now, ttl = cjson.decode(ARGV[3]), ARGV[4], tonumber(ARGV[5])
redis.call('HSET', info, 'channelType', place.channelType, 'channelId', place.channelId,
  'scope', place.scope, 'channelKey', place.channelKey, 'first', now, 'last', now, 'count', 0)
for _, field in ipairs({'channelName', 'threadId', 'title', 'metadata'}) do
  if place[field] then redis.call('HSET', info, field, place[field]) end
end
relist(nil, now)
redis.call('SADD', place.channelKey, cid)
if ttl > 0 then
  redis.call('EXPIRE', info, ttl)
  redis.call('EXPIRE', place.channelKey, ttl)
end
return 1
`);

/**
 * Sets or clears a conversation's title and metadata: 1, or 0 when it is unknown. ARGV:
 * prefix, conversation id, then per field (title, metadata) \`keep\`, \`clear\` or \`set\` and its value.
 */
export const UPDATE_CONVERSATION = new Script(`
local info = key('info')
if redis.call('EXISTS', info) == 0 then return 0 end
for i, field in ipairs({'title', 'metadata'}) do
  local how, value = ARGV[1 + 2 * i], ARGV[2 + 2 * i]
  if how == 'set' then redis.call('HSET', info, field, value) end
  if how == 'clear' then redis.call('HDEL', info, field) end
end
return 1
`);
