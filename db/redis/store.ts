import { applyReaction, type MessageReaction, type ReactionChange } from '../../src/reactions.js';
import { RedisPostQueue } from './posts.js';
import type { NewPost, PostStatus, ScheduledPost } from '../../src/posts.js';
import type * as RedisModule from 'redis';
import { ColloquyError, StoreError } from '../../src/errors.js';
import {
  PARTS_WITHIN,
  type AppendResult,
  type ConversationStore,
  type ConversationSummary,
  type ConversationUpdate,
  type ForgetOptions,
  type GetOptions,
  type ListConversationsOptions,
  type NewConversation,
  type Page,
  type SearchOptions,
} from '../../src/store.js';
import { repliesTo } from '../../src/agent.js';
import { conversationExists, forgetLinks, placeOf, redactTurn } from '../../src/conversations.js';
import { isBefore, normalizeTimestamp } from '../../src/timestamp.js';
import { capByTokens, defaultTokenizer, type Tokenizer } from '../../src/tokenizer.js';
import { refusedUse, usesOf } from '../../src/uses.js';
import {
  isoTimestamp,
  withMetadata,
  type MessageDeletion,
  type MessageEdit,
  type NewMessage,
  type PlatformMessageRef,
  type StoredMessage,
} from '../../src/types.js';
import { type Candidate, candidatesPerWord, rankCandidates, searchRequest } from '../search.js';
import {
  RedisKeys,
  ixPrefix,
  padSeq,
  partsMember,
  platformField,
  platformRefField,
  refsOf,
  seqOf,
} from './keys.js';
import { decodeCursor, encodeCursor, listAll, listOf, readInfo } from './conversations.js';
import { type Lane, newestFirst } from './merge.js';
import {
  APPEND,
  CREATE_CONVERSATION,
  DELETE_CONVERSATION,
  DELETE_MESSAGES,
  FORGET,
  REACT,
  REPLACE,
  UPDATE_CONVERSATION,
  type RedisCommander,
  type Script,
} from './scripts.js';

export type { RedisCommander } from './scripts.js';

export interface RedisStoreOptions {
  /**
   * A connected client: node-redis (`createClient()` from `redis`, major 5 or newer) or
   * anything with its `sendCommand`. The store never closes a client it was given.
   */
  client: RedisCommander;
  /** Starts every key the store writes (default `colloquy:`): several stores can share a server. */
  keyPrefix?: string;
  /**
   * A conversation expires this many seconds after its last turn, edit, deletion or
   * reaction, with all its turns and indexes (default: never).
   */
  ttlSeconds?: number;
  /** Most turns kept per conversation; the oldest go first (default: no cap). */
  maxMessagesPerConversation?: number;
  /** Counts tokens for `search`'s `tokenCap` (default: `defaultTokenizer`). */
  tokenizer?: Tokenizer;
}

/**
 * A `ConversationStore` on Redis 7 (no modules): each conversation is a handful of hashes
 * and sorted sets, each write one Lua script (atomic), and search a word index in a sorted
 * set ranked by BM25 like the SQLite store (see `db/search.ts`). Optional: a TTL after which
 * an idle conversation expires whole, and a cap on the turns kept per conversation.
 *
 * Ids are unique per conversation (a repeated id or platform message in the same
 * conversation stores nothing). Edits replace the text, keeping no revisions. The store
 * runs on one Redis server (or a primary), not across cluster slots.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import { RedisConversationStore } from 'colloquy/redis';
 * const client = await createClient({ url: 'redis://127.0.0.1:6379' }).connect();
 * const store = new RedisConversationStore({ client, ttlSeconds: 30 * 86_400 });
 * await store.append(turn);
 * const recent = await store.get(turn.conversationId, { limit: 20 });
 * ```
 */
export class RedisConversationStore implements ConversationStore {
  /** What every key of this store starts with. */
  readonly keyPrefix: string;
  readonly #client: RedisCommander;
  readonly #keys: RedisKeys;
  readonly #ttl: number;
  readonly #cap: number;
  readonly #tokenizer: Tokenizer;
  readonly #owned: (() => Promise<void>) | undefined;
  readonly #posts: RedisPostQueue;
  #closed = false;

  constructor(options: RedisStoreOptions, close?: () => Promise<void>) {
    this.#client = options.client;
    this.keyPrefix = options.keyPrefix ?? 'colloquy:';
    this.#keys = new RedisKeys(this.keyPrefix);
    this.#ttl = Math.max(0, Math.floor(options.ttlSeconds ?? 0));
    this.#cap = Math.max(0, Math.floor(options.maxMessagesPerConversation ?? 0));
    this.#tokenizer = options.tokenizer ?? defaultTokenizer;
    this.#owned = close;
    this.#posts = new RedisPostQueue(this.#client, this.keyPrefix);
  }

  /**
   * Connects a node-redis client of its own (the optional peer dependency `redis`) and
   * opens a store on it; `close()` closes that client. It fails when the server does not
   * answer; once connected, commands fail at once while the connection is down (a transient
   * `StoreError`, which capture retries) instead of queueing, and the client reconnects.
   *
   * @example
   * ```ts
   * const store = await RedisConversationStore.connect({ url: 'redis://127.0.0.1:6379' });
   * ```
   */
  static async connect(
    options: Omit<RedisStoreOptions, 'client'> & { url?: string },
  ): Promise<RedisConversationStore> {
    const { url, ...rest } = options;
    let redis: typeof RedisModule;
    try {
      redis = await import('redis');
    } catch (error) {
      throw new StoreError(
        'RedisConversationStore.connect needs the `redis` package: npm i redis',
        {
          cause: error,
          transient: false,
        },
      );
    }
    let connected = false;
    const client = redis.createClient({
      ...(url === undefined ? {} : { url }),
      disableOfflineQueue: true,
      // The first connection fails at once; a lost one is tried again, every 2 s at most.
      socket: {
        reconnectStrategy: (retries: number, cause: Error) =>
          connected ? Math.min(50 * retries, 2000) : cause,
      },
    });
    // Failures reach the caller of each store call as a StoreError; the client reconnects.
    client.on('error', () => undefined);
    try {
      await client.connect();
      connected = true;
    } catch (error) {
      throw storeError('connect to Redis', undefined, error);
    }
    const commander: RedisCommander = { sendCommand: (args) => client.sendCommand(args) };
    return new RedisConversationStore({ ...rest, client: commander }, async () => {
      client.destroy();
    });
  }

  async append(given: NewMessage): Promise<AppendResult> {
    const action = 'append a turn';
    return this.#guard(action, given.conversationId, async () => {
      const input = withMetadata(given);
      const timestamp = normalizeTimestamp(input.timestamp, 'timestamp', {
        conversationId: input.conversationId,
        messageId: input.id,
      });
      const message: NewMessage = { ...input, timestamp };
      const { metadata } = message;
      const place = {
        channelType: metadata.channelType,
        channelId: metadata.channelId,
        channelName: metadata.channelName,
        threadId: metadata.threadId,
        scope: message.scope,
        channelKey: this.#keys.channel(metadata.channelType, metadata.channelId),
      };
      const json = encode(message, action);
      const uses = usesOf(message);
      const refused = uses === undefined ? undefined : refusedUse(message);
      const reply = (await this.#run(APPEND, message.conversationId, [
        message.id,
        platformField(message),
        timestamp,
        json,
        JSON.stringify(refsOf(message)),
        JSON.stringify(place),
        message.participant.id,
        `${this.#ttl}`,
        `${this.#cap}`,
        message.participant.kind,
        uses ?? '',
        refused === undefined ? '' : encode(refused, action),
        refused === undefined ? '' : JSON.stringify(refsOf(refused)),
      ])) as [number, string, (string | number)?];
      const [inserted, seq, stored] = reply;
      if (inserted === 1) {
        const as = stored === 1 ? refused! : message;
        return { message: { ...as, sequence: Number(seq) }, inserted: true };
      }
      return { message: decode(seq, stored as string), inserted: false };
    });
  }

  async get(conversationId: string, options: GetOptions = {}): Promise<StoredMessage[]> {
    return this.#guard('read turns', conversationId, async () => {
      const limit = Math.max(0, Math.floor(options.limit ?? 100));
      if (limit === 0) return [];
      const bounds = {
        since: optionalTimestamp(options.sinceTimestamp, 'sinceTimestamp'),
        before: optionalTimestamp(options.before, 'before'),
      };
      const base = this.#keys.conversation(conversationId);
      const participants = options.participantIds && new Set(options.participantIds);
      const lanes = this.#lanes(base, options);
      const found: StoredMessage[] = [];
      const keep = (m: StoredMessage) =>
        (options.includeSummaries === true || m.metadata.isSummary !== true) &&
        (options.includeDeleted === true || m.deletedAt === undefined) &&
        (options.scope === undefined || m.scope === options.scope) &&
        (participants === undefined || participants.has(m.participant.id)) &&
        (options.replyTo === undefined || repliesTo(m, options.replyTo));
      let pending: string[] = [];
      const load = async () => {
        for (const message of await this.#load(base, pending)) {
          if (found.length < limit && keep(message)) found.push(message);
        }
        pending = [];
      };
      const batch = Math.min(Math.max(limit, 16), 1000);
      for await (const stamp of newestFirst(this.#client, lanes, bounds, batch)) {
        pending.push(seqOf(stamp));
        if (pending.length >= limit - found.length) await load();
        if (found.length >= limit) break;
      }
      if (pending.length > 0) await load();
      return found.reverse();
    });
  }

  async search(
    conversationId: string,
    query: string,
    options: SearchOptions = {},
  ): Promise<StoredMessage[]> {
    return this.#guard('search', conversationId, async () => {
      const request = searchRequest(query, options);
      if (request === undefined) return [];
      const { words, limit } = request;
      const base = this.#keys.conversation(conversationId);
      const index = `${base}words`;
      const perWord = candidatesPerWord(words.length);
      const [count, ...replies] = await Promise.all([
        this.#command('HGET', `${base}info`, 'count'),
        ...words.flatMap(({ key }) => [
          this.#command(
            'ZRANGE',
            index,
            `(${key}\x01`,
            `[${key}\0`,
            'BYLEX',
            'REV',
            'LIMIT',
            '0',
            `${perWord}`,
          ),
          this.#command('ZLEXCOUNT', index, `[${key}\0`, `(${key}\x01`),
        ]),
      ]);
      if (count === null) return [];
      const found = new Map<string, number>();
      const seqs = new Set<string>();
      words.forEach(({ key }, i) => {
        for (const member of replies[2 * i] as string[]) seqs.add(seqOf(member));
        found.set(key, Number(replies[2 * i + 1]));
      });
      if (seqs.size === 0) return [];
      const messages = await this.#load(base, [...seqs]);
      const bySeq = new Map(messages.map((m) => [m.sequence!, m]));
      const candidates: Candidate[] = messages
        .filter((m) => m.deletedAt === undefined && m.metadata.isSummary !== true)
        .map((m) => ({ seq: m.sequence!, content: m.content }));
      const keys = words.map((w) => w.key);
      const ranked = rankCandidates(candidates, keys, Number(count), found).slice(0, limit);
      const results = ranked.flatMap((seq) => bySeq.get(seq) ?? []);
      return capByTokens(results, options.tokenCap ?? 2000, this.#tokenizer);
    });
  }

  async deleteMessages(conversationId: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    return this.#guard('delete turns', conversationId, async () =>
      Number(await this.#run(DELETE_MESSAGES, conversationId, ids)),
    );
  }

  async listConversations(
    options: ListConversationsOptions = {},
  ): Promise<Page<ConversationSummary>> {
    return this.#guard('list conversations', undefined, async () => {
      const limit = Math.max(1, Math.floor(options.limit ?? 50));
      const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
      const wanted = (c: ConversationSummary) =>
        options.channelType === undefined || c.channelType === options.channelType;
      const sets = [
        ...(options.participantId === undefined
          ? []
          : [this.#keys.participant(options.participantId)]),
        ...(options.agentId === undefined ? [] : [this.#keys.agent(options.agentId)]),
      ];
      const want = { skip: Math.max(0, Math.floor(options.offset ?? 0)), take: limit + 1 };
      const items =
        sets.length === 0
          ? await listAll(this.#client, this.#keys, want, after, wanted)
          : await listOf(this.#client, this.#keys, sets, want, after, wanted);
      const page = items.slice(0, limit);
      const last = page[page.length - 1];
      return items.length > limit && last !== undefined
        ? { items: page, nextCursor: encodeCursor(last) }
        : { items: page };
    });
  }

  async getConversation(conversationId: string): Promise<ConversationSummary | undefined> {
    return this.#guard('read a conversation', conversationId, () =>
      readInfo(this.#client, this.#keys, conversationId),
    );
  }

  async createConversation(input: NewConversation): Promise<ConversationSummary> {
    return this.#guard('create a conversation', input.id, async () => {
      const place = placeOf(input);
      const fields = {
        ...place,
        channelKey: this.#keys.channel(place.channelType, place.channelId),
        ...(input.title === undefined ? {} : { title: input.title }),
        ...(input.metadata === undefined ? {} : { metadata: JSON.stringify(input.metadata) }),
      };
      const args = [JSON.stringify(fields), isoTimestamp(), `${this.#ttl}`];
      if (Number(await this.#run(CREATE_CONVERSATION, input.id, args)) === 0) {
        throw conversationExists(input.id);
      }
      return (await readInfo(this.#client, this.#keys, input.id))!;
    });
  }

  async updateConversation(
    conversationId: string,
    update: ConversationUpdate,
  ): Promise<ConversationSummary | undefined> {
    return this.#guard('update a conversation', conversationId, async () => {
      const how = (value: unknown, text: () => string) =>
        value === undefined ? ['keep', ''] : value === null ? ['clear', ''] : ['set', text()];
      const args = [
        ...how(update.title, () => update.title!),
        ...how(update.metadata, () => JSON.stringify(update.metadata)),
      ];
      if (Number(await this.#run(UPDATE_CONVERSATION, conversationId, args)) === 0) {
        return undefined;
      }
      return readInfo(this.#client, this.#keys, conversationId);
    });
  }

  async deleteConversation(conversationId: string): Promise<boolean> {
    return this.#guard('delete a conversation', conversationId, async () => {
      return Number(await this.#run(DELETE_CONVERSATION, conversationId, [])) === 1;
    });
  }

  async forgetParticipant(participantId: string, options: ForgetOptions = {}): Promise<number> {
    const mode = options.mode === 'redact' ? 'redact' : 'delete';
    return this.#guard('forget a participant', undefined, async () => {
      const set = this.#keys.participant(participantId);
      const done = new Set<string>();
      const wrote = (await this.#command('SMEMBERS', set)) as string[];
      const threads = await this.#threadsUnder(participantId, wrote);
      let count = 0;
      // FORGET takes each conversation off the set once no turn of theirs is left there, so
      // reading it again finds where they wrote meanwhile (left listed after the last round).
      for (let round = 0; round < FORGET_ROUNDS; round++) {
        const listed = (await this.#command('SMEMBERS', set)) as string[];
        // blanked turns keep their conversations listed: each is redacted once
        const left = mode === 'delete' ? listed : listed.filter((id) => !done.has(id));
        if (left.length === 0) break;
        for (const conversationId of left) {
          done.add(conversationId);
          if (mode === 'redact') count += await this.#redact(conversationId, participantId);
          count += Number(await this.#run(FORGET, conversationId, [participantId, mode]));
        }
      }
      // A thread under a turn of theirs retells it: its summaries go (FORGET keeps its turns).
      for (const thread of threads.filter((id) => !done.has(id))) {
        await this.#run(FORGET, thread, [participantId, 'redact']);
      }
      await this.#unreact(participantId);
      if (mode === 'delete') await this.#unlink(participantId);
      return count;
    });
  }

  async recordEdit(edit: MessageEdit): Promise<boolean> {
    return this.#guard('record an edit', undefined, async () => {
      const editedAt = normalizeTimestamp(edit.editedAt, 'editedAt');
      return this.#change(edit, (m) =>
        isBefore(editedAt, m.editedAt) ? m : { ...m, content: edit.content, editedAt },
      );
    });
  }

  async recordDeletion(deletion: MessageDeletion): Promise<boolean> {
    return this.#guard('record a deletion', undefined, async () => {
      const deletedAt = normalizeTimestamp(deletion.deletedAt, 'deletedAt');
      return this.#change(deletion, (m) => ({ ...m, deletedAt }), true);
    });
  }

  /**
   * Reactions live beside the turns, a JSON list per turn id in the conversation's `rx` hash,
   * rewritten only if no other writer changed it since it was read (else read again).
   */
  async recordReaction(change: ReactionChange): Promise<boolean> {
    return this.#guard('record a reaction', undefined, async () => {
      const at = normalizeTimestamp(change.at, 'at');
      const place = await this.#locate(change, true);
      if (place === undefined) return false;
      const conversation = this.#keys.conversation(place.conversationId);
      const found = (await this.#load(conversation, [place.seq]))[0];
      if (found === undefined) return false;
      const reacted = this.#keys.reacted(change.participantId);
      return this.#react(found.conversationId, found.id, reacted, this.#ttl, (before) =>
        applyReaction(before, { ...change, at }),
      );
    });
  }

  async getReactions(conversationId: string, messageId: string): Promise<MessageReaction[]> {
    return this.#guard('read reactions', conversationId, async () => {
      const key = `${this.#keys.conversation(conversationId)}rx`;
      const json = (await this.#command('HGET', key, messageId)) as string | null;
      return json === null ? [] : (JSON.parse(json) as MessageReaction[]);
    });
  }

  /** Stores a post the bot starts (see `PostQueue`). */
  schedulePost(post: NewPost, claim?: { holder: string; ttlMs: number }): Promise<void> {
    return this.#guard('store a post', post.conversationId, () =>
      this.#posts.schedulePost(post, claim),
    );
  }

  claimDuePosts(
    holder: string,
    ttlMs: number,
    options?: { limit?: number; takeOver?: boolean },
  ): Promise<ScheduledPost[]> {
    return this.#guard('claim due posts', undefined, () =>
      this.#posts.claimDuePosts(holder, ttlMs, options),
    );
  }

  renewPostClaims(holder: string, ttlMs: number): Promise<number> {
    return this.#guard('renew post claims', undefined, () =>
      this.#posts.renewPostClaims(holder, ttlMs),
    );
  }

  finishPost(id: string, status: Exclude<PostStatus, 'pending'>, error?: string): Promise<void> {
    return this.#guard('end a post', undefined, () => this.#posts.finishPost(id, status, error));
  }

  getPosts(query?: { statuses?: readonly PostStatus[] }): Promise<ScheduledPost[]> {
    return this.#guard('read posts', undefined, () => this.#posts.getPosts(query));
  }

  async getSummary(conversationId: string, agentId: string): Promise<StoredMessage | undefined> {
    return this.#guard('read a summary', conversationId, async () => {
      const base = this.#keys.conversation(conversationId);
      const lane = { key: `${base}ix`, prefix: ixPrefix('sum', agentId) };
      // The newest (by time, then by insertion) that is not deleted.
      for await (const stamp of newestFirst(this.#client, [lane], {}, 8)) {
        const [summary] = await this.#load(base, [seqOf(stamp)]);
        if (summary !== undefined && summary.deletedAt === undefined) return summary;
      }
      return undefined;
    });
  }

  async getMessage(conversationId: string, id: string): Promise<StoredMessage | undefined> {
    return this.#guard('read a turn', conversationId, async () => {
      const base = this.#keys.conversation(conversationId);
      const seq = (await this.#command('HGET', `${base}ids`, id)) as string | null;
      return seq === null ? undefined : (await this.#load(base, [seq]))[0];
    });
  }

  async findByPlatformRef(ref: PlatformMessageRef): Promise<StoredMessage | undefined> {
    return this.#guard('find a turn', undefined, async () => {
      const found = await this.#locate(ref, true);
      if (found === undefined) return undefined;
      return (await this.#load(this.#keys.conversation(found.conversationId), [found.seq]))[0];
    });
  }

  async findMessage(
    conversationId: string,
    ref: PlatformMessageRef,
  ): Promise<StoredMessage | undefined> {
    return this.#guard('find a turn', conversationId, async () => {
      const base = this.#keys.conversation(conversationId);
      const seq = (await this.#command('HGET', `${base}pm`, platformRefField(ref))) as
        string | null;
      if (seq !== null) return (await this.#load(base, [seq]))[0];
      return (await this.#partOf(base, ref))?.message;
    });
  }

  /**
   * The reply of a conversation one of whose later parts (`metadata.partMessageIds`) is `ref`:
   * only a reply's first part is in `pm`, so the turns are read.
   */
  async #partOf(
    base: string,
    ref: PlatformMessageRef,
  ): Promise<{ seq: string; message: StoredMessage } | undefined> {
    const all = (await this.#command('HGETALL', `${base}msgs`)) as
      string[] | Record<string, string>;
    const turns = Array.isArray(all)
      ? Array.from({ length: all.length / 2 }, (_, i) => [all[2 * i]!, all[2 * i + 1]!])
      : Object.entries(all);
    for (const [seq, json] of turns) {
      if (!json!.includes(ref.messageId)) continue;
      const message = decode(seq!, json!);
      if (isPartOf(message, ref)) return { seq: seq!, message };
    }
    return undefined;
  }

  /**
   * The reply one of whose later parts is `ref`, in one of `conversations` (those of its
   * channel), among the store's newest `PARTS_WITHIN` turns, newest first: a range of the
   * `parts` list, so a message the store does not have costs a bounded read.
   */
  async #partIn(
    conversations: string[],
    ref: PlatformMessageRef,
  ): Promise<{ conversationId: string; seq: string } | undefined> {
    if (conversations.length === 0) return undefined;
    const newest = Number(await this.#command('GET', `${this.keyPrefix}seq`));
    const oldest = padSeq(Math.max(1, newest - PARTS_WITHIN + 1));
    const listed = (await this.#command(
      'ZRANGE',
      this.#keys.parts,
      '+',
      `[${oldest}`,
      'BYLEX',
      'REV',
    )) as string[];
    // The seqs listed for each conversation of the channel, newest first.
    const wanted = new Map(conversations.map((id) => [id, [] as string[]]));
    for (const { seq, conversationId } of listed.map(partsMember)) {
      wanted.get(conversationId)?.push(seq);
    }
    const found = await Promise.all(
      [...wanted].map(async ([conversationId, seqs]) => {
        if (seqs.length === 0) return [];
        const base = this.#keys.conversation(conversationId);
        const turns = (await this.#command('HMGET', `${base}msgs`, ...seqs)) as (string | null)[];
        const at = turns.findIndex(
          (json, i) => json !== null && isPartOf(decode(seqs[i]!, json), ref),
        );
        return at < 0 ? [] : [{ conversationId, seq: seqs[at]! }];
      }),
    );
    return found.flat().sort((a, b) => Number(b.seq) - Number(a.seq))[0];
  }

  /** Closes the client the store connected itself (`connect`); a given client stays open. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#owned?.();
  }

  /** The lanes `get` merges: the whole conversation, or the index runs its filter names. */
  #lanes(base: string, options: GetOptions): Lane[] {
    const ix = `${base}ix`;
    if (options.concerning !== undefined) {
      return [
        { key: ix, prefix: ixPrefix('dm') },
        ...options.concerning.aliases.flatMap((alias) =>
          ['by', 're', 'at'].map((kind) => ({ key: ix, prefix: ixPrefix(kind, alias) })),
        ),
      ];
    }
    if (options.replyTo !== undefined) {
      return [{ key: ix, prefix: ixPrefix('re', options.replyTo.participantId) }];
    }
    if (options.participantIds !== undefined) {
      return options.participantIds.map((id) => ({ key: ix, prefix: ixPrefix('by', id) }));
    }
    return [{ key: `${base}order`, prefix: '' }];
  }

  /** Turns by seq, in the order given; those gone meanwhile are left out. */
  async #load(base: string, seqs: string[]): Promise<StoredMessage[]> {
    if (seqs.length === 0) return [];
    const values = (await this.#command('HMGET', `${base}msgs`, ...seqs)) as (string | null)[];
    return values.flatMap((json, i) => (json === null ? [] : [decode(seqs[i]!, json)]));
  }

  /**
   * Applies `change` to the stored turn a platform message names, renewing the conversation's
   * TTL as a turn does (an edit or a deletion is activity); false when unknown.
   */
  async #change(
    ref: PlatformMessageRef,
    change: (message: StoredMessage) => StoredMessage,
    parts = false,
  ): Promise<boolean> {
    const found = await this.#locate(ref, parts);
    return found !== undefined && this.#replace(found.conversationId, found.seq, change, true);
  }

  /**
   * Where the turn of a platform message is: its conversation and sequence; with `parts`, also
   * the reply it is a later part of. Undefined when unknown.
   */
  async #locate(
    ref: PlatformMessageRef,
    parts = false,
  ): Promise<{ conversationId: string; seq: string } | undefined> {
    const channel = this.#keys.channel(ref.channelType, ref.channelId);
    const field = platformRefField(ref);
    const conversations = (await this.#command('SMEMBERS', channel)) as string[];
    const seqs = (await Promise.all(
      conversations.map((id) => this.#command('HGET', `${this.#keys.conversation(id)}pm`, field)),
    )) as (string | null)[];
    const at = seqs.findIndex((seq) => seq !== null);
    if (at >= 0) return { conversationId: conversations[at]!, seq: seqs[at]! };
    const part = parts ? await this.#partIn(conversations, ref) : undefined;
    if (part !== undefined) return part;
    // Conversations that expired leave their ids behind: those go now.
    for (const id of conversations) {
      const gone = Number(await this.#command('EXISTS', `${this.#keys.conversation(id)}info`));
      if (gone === 0) await this.#command('SREM', channel, id);
    }
    return undefined;
  }

  /**
   * Rewrites one turn: reads it, applies `change`, and writes it back only if nothing else
   * changed it meanwhile (else tries again, see `RETRIES`). False when the turn is gone.
   * `renew`: the conversation's TTL starts again (else it keeps the time it has left).
   */
  async #replace(
    conversationId: string,
    seq: string,
    change: (message: StoredMessage) => StoredMessage,
    renew = false,
  ): Promise<boolean> {
    const base = this.#keys.conversation(conversationId);
    let gone = false;
    await this.#retried(conversationId, 'the turn', async () => {
      const old = (await this.#command('HGET', `${base}msgs`, seq)) as string | null;
      if (old === null) return (gone = true);
      const { sequence: _, ...changed } = change(decode(seq, old));
      const json = encode(changed, 'change a turn');
      const refs = JSON.stringify(refsOf(changed));
      const args = [seq, old, json, refs, renew ? `${this.#ttl}` : '0'];
      return Number(await this.#run(REPLACE, conversationId, args)) === 1;
    });
    return !gone;
  }

  /**
   * Runs `attempt` (a read, a change computed here, and a script that writes it only if what
   * was read is still there) until it answers true, `RETRIES` times at most.
   */
  async #retried(
    conversationId: string,
    what: string,
    attempt: () => Promise<boolean>,
  ): Promise<void> {
    for (let tries = 1; !(await attempt()); tries++) {
      if (tries === RETRIES) {
        throw new StoreError(`${what} kept changing while being rewritten`, {
          conversationId,
          transient: true,
        });
      }
    }
  }

  /**
   * The conversations of the threads under a turn of `participantId` in `conversations`: a
   * thread in the same channel whose `threadId` is the platform id of a turn of theirs.
   */
  async #threadsUnder(participantId: string, conversations: string[]): Promise<string[]> {
    const threads: string[] = [];
    for (const conversationId of conversations) {
      const base = this.#keys.conversation(conversationId);
      const info = await readInfo(this.#client, this.#keys, conversationId);
      if (info === undefined) continue;
      const channel = this.#keys.channel(info.channelType, info.channelId);
      for (const other of (await this.#command('SMEMBERS', channel)) as string[]) {
        const thread = await readInfo(this.#client, this.#keys, other);
        if (other === conversationId || thread?.threadId === undefined) continue;
        const ref = { channelType: info.channelType, channelId: info.channelId };
        const field = platformRefField({ ...ref, messageId: thread.threadId });
        const seq = (await this.#command('HGET', `${base}pm`, field)) as string | null;
        const json = seq === null ? null : await this.#command('HGET', `${base}msgs`, seq);
        if (typeof json !== 'string') continue;
        if (decode(seq!, json).participant.id === participantId) threads.push(other);
      }
    }
    return threads;
  }

  /** Drops a forgotten participant from the mentions and reply links of everyone's turns. */
  async #unlink(participantId: string): Promise<void> {
    const named = this.#keys.named(participantId);
    for (const conversationId of (await this.#command('SMEMBERS', named)) as string[]) {
      const base = this.#keys.conversation(conversationId);
      const lanes = ['re', 'at'].map((kind) => ({
        key: `${base}ix`,
        prefix: ixPrefix(kind, participantId),
      }));
      const seqs: string[] = [];
      for await (const stamp of newestFirst(this.#client, lanes, {}, 500)) seqs.push(seqOf(stamp));
      for (const seq of seqs) {
        await this.#replace(conversationId, seq, (m) => forgetLinks(m, participantId));
      }
      await this.#command('SREM', `${base}named`, participantId);
    }
    await this.#command('DEL', named);
  }

  /**
   * Takes a forgotten participant's reactions off every turn they reacted to, through the
   * same compare-and-set as `recordReaction`: a reaction someone else records meanwhile stays.
   */
  async #unreact(participantId: string): Promise<void> {
    const reacted = this.#keys.reacted(participantId);
    for (const conversationId of (await this.#command('SMEMBERS', reacted)) as string[]) {
      const key = `${this.#keys.conversation(conversationId)}rx`;
      for (const turnId of (await this.#command('HKEYS', key)) as string[]) {
        await this.#react(conversationId, turnId, '', 0, (before) => {
          const after = before.filter((r) => r.participantId !== participantId);
          return after.length === before.length ? undefined : after;
        });
      }
    }
    await this.#command('DEL', reacted);
  }

  /**
   * Rewrites one turn's reactions: reads them, applies `change` (undefined: leave them as
   * they are), and writes the result with the REACT script only if nothing else changed them
   * meanwhile (else reads again, see `RETRIES`). `reacted` lists the conversation under whoever
   * reacted ('' for nobody); `ttl` renews it (0: it keeps the time it has left). False when
   * the turn is gone.
   */
  async #react(
    conversationId: string,
    turnId: string,
    reacted: string,
    ttl: number,
    change: (before: MessageReaction[]) => MessageReaction[] | undefined,
  ): Promise<boolean> {
    const key = `${this.#keys.conversation(conversationId)}rx`;
    let gone = false;
    await this.#retried(conversationId, 'the reactions', async () => {
      const old = ((await this.#command('HGET', key, turnId)) as string | null) ?? '';
      const after = change(old === '' ? [] : (JSON.parse(old) as MessageReaction[]));
      if (after === undefined) return true;
      const json = after.length === 0 ? '' : JSON.stringify(after);
      const args = [turnId, old, json, reacted, `${ttl}`];
      const written = Number(await this.#run(REACT, conversationId, args));
      gone = written === -1;
      return written !== 0;
    });
    return !gone;
  }

  /** Blanks a participant's turns in one conversation; how many (summaries not counted). */
  async #redact(conversationId: string, participantId: string): Promise<number> {
    const base = this.#keys.conversation(conversationId);
    const lane = { key: `${base}ix`, prefix: ixPrefix('by', participantId) };
    let count = 0;
    for await (const stamp of newestFirst(this.#client, [lane], {}, 500)) {
      const redacted = await this.#replace(conversationId, seqOf(stamp), redactTurn);
      if (redacted) count++;
    }
    return count;
  }

  #run(script: Script, conversationId: string, args: string[]): Promise<unknown> {
    const base = this.#keys.conversation(conversationId);
    return script.run(this.#client, base, [this.#keys.prefix, conversationId, ...args]);
  }

  #command(...args: string[]): Promise<unknown> {
    return this.#client.sendCommand(args);
  }

  /** Runs one store call, turning every failure into a StoreError with context and cause. */
  async #guard<T>(
    action: string,
    conversationId: string | undefined,
    fn: () => Promise<T> | T,
  ): Promise<T> {
    if (this.#closed) {
      throw new StoreError(`cannot ${action}: the store is closed`, {
        conversationId,
        transient: true,
      });
    }
    try {
      return await fn();
    } catch (error) {
      throw storeError(action, conversationId, error);
    }
  }
}

function optionalTimestamp(value: string | undefined, what: string): string | undefined {
  return value === undefined ? undefined : normalizeTimestamp(value, what);
}

/** A turn as stored: its JSON without the sequence (the hash field holds it). */
function encode(message: Omit<StoredMessage, 'sequence'>, action: string): string {
  try {
    return JSON.stringify(message);
  } catch (error) {
    throw new StoreError(`cannot ${action}: its metadata is not JSON (${String(error)})`, {
      conversationId: message.conversationId,
      messageId: message.id,
      cause: error,
      transient: false,
    });
  }
}

/** Whether `message` is a reply of `ref`'s channel one of whose later parts `ref` is. */
function isPartOf({ metadata }: StoredMessage, ref: PlatformMessageRef): boolean {
  return (
    metadata.channelId === ref.channelId &&
    metadata.partMessageIds?.includes(ref.messageId) === true
  );
}

function decode(seq: string, json: string): StoredMessage {
  return { ...(JSON.parse(json) as StoredMessage), sequence: Number(seq) };
}

/** A failure of one store call as a StoreError with context and cause (a ColloquyError as is). */
function storeError(action: string, conversationId: string | undefined, error: unknown) {
  if (error instanceof ColloquyError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StoreError(`cannot ${action}: ${message}`, {
    conversationId,
    cause: error,
    transient: isTransient(error),
  });
}

/**
 * Whether a failure can pass: the connection (closed, offline, refused, timed out) and a
 * server that is loading, busy, out of memory or failing over can; any other error reply
 * (a wrong type under a key, a script error) will not. Undefined for anything else.
 */
function isTransient(error: unknown): boolean | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  // node-redis's error classes leave `name` as 'Error': they are told apart by class.
  const name = error.constructor.name;
  if (name === 'ErrorReply' || name === 'SimpleError' || name === 'BlobError') {
    return /^(LOADING|BUSY|OOM|TRYAGAIN|MASTERDOWN|CLUSTERDOWN|READONLY|NOREPLICAS)\b/.test(
      String(message),
    );
  }
  if (CONNECTION_ERRORS.has(name)) return true;
  if (
    typeof code === 'string' &&
    /^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH)$/.test(code)
  ) {
    return true;
  }
  return undefined;
}

/**
 * How often a rewrite reads again after another writer got in first: every round lets one
 * writer through, so this bounds the writers of one turn (or its reactions) at once.
 */
const RETRIES = 100;

/** How many times forgetParticipant reads the person's conversations again (see there). */
const FORGET_ROUNDS = 3;

/** node-redis's errors for a connection that is not (or no longer) there. */
const CONNECTION_ERRORS = new Set([
  'ClientClosedError',
  'ClientOfflineError',
  'SocketClosedUnexpectedlyError',
  'ConnectionTimeoutError',
  'SocketTimeoutError',
  'TimeoutError',
  'ReconnectStrategyError',
  'DisconnectsClientError',
]);
