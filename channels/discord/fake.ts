import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { steadyTraffic, type SteadyTraffic } from '../testing/traffic.js';
import { AnswerDelay } from '../testing/answer-delay.js';
import { EditWindow, type EditLimit } from '../testing/edit-limit.js';
import { FakeGateway, type FakeDiscordDispatch, type FakeDiscordIdentify } from './fake/gateway.js';
import { FakeDiscordInteractions } from './fake/interactions.js';
export type { FakeDiscordAcknowledgement } from './fake/interactions.js';
export { FakeDiscordInteractions };
import { FakeDiscordFiles, IS_VOICE_MESSAGE, type FakeDiscordFile } from './fake/files.js';
import {
  handleRest,
  type FakeDiscordFailure,
  type FakeDiscordRequest,
  type RestHost,
} from './fake/rest.js';
import {
  CHANNEL_TYPE,
  guildChannel,
  guildCreatePayload,
  memberOf,
  messagePayload,
  snowflakes,
  threadChannel,
  type FakeDiscordChannel,
  type FakeDiscordChannelInit,
  type FakeDiscordGuild,
  type FakeDiscordMessage,
  type FakeDiscordStickerItem,
  type FakeDiscordUser,
} from './fake/payloads.js';

export type { FakeDiscordFile } from './fake/files.js';
export type {
  FakeDiscordChannel,
  FakeDiscordDispatch,
  FakeDiscordFailure,
  FakeDiscordRequest,
  FakeDiscordChannelInit,
  FakeDiscordIdentify,
  FakeDiscordMessage,
  FakeDiscordStickerItem,
  FakeDiscordUser,
};

export interface FakeDiscordOptions {
  /** The bot token the fake accepts (REST `Authorization: Bot …` and IDENTIFY). */
  token?: string;
  /** The bot's own user, sent in READY and as the author of what it posts. */
  bot?: Omit<FakeDiscordUser, 'bot'>;
  /** HELLO's heartbeat interval in ms (default 41250, as Discord sends). */
  heartbeatInterval?: number;
  /** Dispatch MESSAGE_CREATE for the bot's own posts, as Discord does (default true). */
  echo?: boolean;
  /**
   * Dispatches sent right after READY, before the GUILD_CREATEs: events that arrive while
   * discord.js is still starting (it queues them until every guild is available).
   */
  beforeGuilds?: Array<{ t: string; d: unknown }>;
  /**
   * How many shards the bot must run (default 1): `GET /gateway/bot` recommends it, IDENTIFY
   * must name one of them, and each guild's events go to its shard, as on Discord.
   */
  shards?: number;
  /**
   * How long a nonce posted with `enforce_nonce` is kept (default 300 000: Discord keeps one
   * "a few minutes"): the same nonce again within it is answered with the message created
   * then, and creates nothing.
   */
  nonceWindowMs?: number;
  /**
   * How long the fake waits between creating a message the bot posted (and dispatching its
   * MESSAGE_CREATE) and answering the POST, in ms, or a range to draw from (default 0): a bot
   * that dies meanwhile has posted the message without learning its id.
   */
  answerDelayMs?: number | [number, number];
  /**
   * How long after an INTERACTION_CREATE its acknowledgement is accepted (default 3000, as
   * Discord); later, 404 Unknown interaction. 0 refuses every one (a test of a late one).
   */
  ackDeadlineMs?: number;
  /** Edits of one channel before a `PATCH` gets 429 `retry_after` (default 5 in 5 s). */
  editLimit?: EditLimit;
}

export interface FakeDiscordUserMessage {
  channelId: string;
  author: FakeDiscordUser;
  content: string;
  /** Users mentioned (Discord lists them in `mentions`; write `<@id>` in `content` too). */
  mentions?: FakeDiscordUser[];
  /** Id of a message this one replies to (any message the fake knows, the bot's included). */
  referencedMessage?: string;
  /** The author's server nickname (guild channels). */
  nick?: string;
  /** Stickers sent with the message (Discord's sticker items: id, name, format type). */
  stickers?: FakeDiscordStickerItem[];
  /** Files posted with the message, served by the fake's CDN. */
  files?: FakeDiscordFile[];
}

const DEFAULT_BOT = { id: '1100000000000000001', username: 'colloquy-bot', global_name: null };

/**
 * A loopback Discord: REST (`/api/v10/...`) and the JSON gateway on one 127.0.0.1 port, for
 * driving the real discord.js against scripted guilds, channels and messages.
 *
 * @example
 * ```ts
 * import { FakeDiscord } from 'colloquy/testing';
 * import { DiscordChannel } from 'colloquy/discord';
 *
 * const discord = await FakeDiscord.start();
 * discord.addGuild({ id: '81384788765712384', name: 'Test', channels: [{ id: '41771983423143937', name: 'general' }] });
 * const channel = new DiscordChannel({ token: discord.token, clientOptions: { rest: { api: discord.restApi } } });
 * // … start a Bot with the channel, then:
 * discord.userMessage({ channelId: '41771983423143937', author: { id: '1', username: 'alice' }, content: `<@${discord.botUser.id}> hi`, mentions: [discord.botUser] });
 * const [reply] = await discord.waitForPosted(1);
 * await discord.close();
 * ```
 */
export class FakeDiscord {
  readonly token: string;
  readonly botUser: FakeDiscordUser;
  /** How many shards the bot must run. */
  readonly shards: number;
  /** Messages the bot posted through REST, in order. */
  readonly posted: FakeDiscordMessage[] = [];
  /** Every REST call, in order. */
  readonly requests: FakeDiscordRequest[] = [];
  /** Slash commands and button presses, their registration and acknowledgements. */
  readonly interactions: FakeDiscordInteractions;
  /** The files people posted, served by the fake's CDN. */
  readonly files = new FakeDiscordFiles(() => `http://127.0.0.1:${this.port}`);
  /** The files the bot posted, in order, with the attachment Discord answered. */
  readonly uploads: {
    name: string;
    mimeType: string;
    content: Buffer;
    description?: string;
    attachment: Record<string, unknown>;
  }[] = [];
  /** The reactions the bot added (`PUT …/reactions/<emoji>/@me`), in order. */
  readonly botReactions: { channelId: string; messageId: string; emoji: string }[] = [];
  private readonly nextId = snowflakes();
  private readonly guilds = new Map<string, FakeDiscordGuild>();
  private readonly channels = new Map<string, FakeDiscordChannel>();
  private readonly messages = new Map<string, FakeDiscordMessage>();
  private readonly failures: FakeDiscordFailure[] = [];
  private readonly events = new EventEmitter();
  private readonly gateway: FakeGateway;
  private readonly server: Server;
  private readonly echo: boolean;
  /** Nonces posted with `enforce_nonce`: the message each created, and when. */
  private readonly nonces = new Map<string, { message: FakeDiscordMessage; at: number }>();
  private readonly nonceWindowMs: number;
  private readonly answerDelay: AnswerDelay;

  private constructor(options: FakeDiscordOptions) {
    this.nonceWindowMs = options.nonceWindowMs ?? 300_000;
    this.answerDelay = new AnswerDelay(options.answerDelayMs);
    const edits = new EditWindow(options.editLimit ?? { calls: 5, perMs: 5000 });
    this.token = options.token ?? 'fake-discord-token';
    this.shards = options.shards ?? 1;
    this.botUser = { ...DEFAULT_BOT, ...options.bot, bot: true };
    this.echo = options.echo ?? true;
    this.gateway = new FakeGateway(
      {
        token: this.token,
        heartbeatInterval: options.heartbeatInterval ?? 41_250,
        shards: this.shards,
        ready: (sessionId, resumeUrl, shard) => ({
          v: 10,
          user: this.botUser,
          guilds: this.guildsOn(shard).map((guild) => ({ id: guild.id, unavailable: true })),
          session_id: sessionId,
          resume_gateway_url: resumeUrl,
          shard: [shard, this.shards],
          application: { id: this.botUser.id, flags: 0 },
          private_channels: [],
        }),
        afterReady: (shard) => [
          ...(shard === 0 ? (options.beforeGuilds ?? []) : []),
          ...this.guildsOn(shard).map((guild) => ({
            t: 'GUILD_CREATE',
            d: guildCreatePayload(guild, this.botUser),
          })),
        ],
      },
      () => this.gatewayUrl,
    );
    this.interactions = new FakeDiscordInteractions(
      {
        botUser: this.botUser,
        channel: (id) => this.channels.get(id),
        message: (id) => this.messages.get(id),
        nextId: () => this.nextId(),
        dispatch: (t, d) => this.gateway.dispatch(t, d),
        post: (channelId, body) => {
          const message = this.restHost(edits).post(
            this.channels.get(channelId)!,
            body.content ?? '',
          );
          if (body.components !== undefined) message.components = body.components;
          return message;
        },
        edit: (messageId, body) => {
          const message = this.requireMessage(messageId);
          if (body.components !== undefined) message.components = body.components;
          return body.content === undefined
            ? message
            : this.editMessage({ messageId, content: body.content });
        },
      },
      options.ackDeadlineMs === undefined ? {} : { ackDeadlineMs: options.ackDeadlineMs },
    );
    this.server = createServer(
      (req, res) => void (this.files.serve(req, res) || handleRest(this.restHost(edits), req, res)),
    );
    this.server.on('upgrade', (req, socket, head) => {
      if (new URL(req.url ?? '/', 'http://x').pathname === '/gateway') {
        this.gateway.upgrade(req, socket, head);
      } else socket.destroy();
    });
  }

  /** Starts a fake on a free 127.0.0.1 port. */
  static async start(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
    const fake = new FakeDiscord(options);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Posts created whose HTTP answer is still held back (`answerDelayMs`). */
  get answersHeld(): number {
    return this.answerDelay.held;
  }

  /** Pass as discord.js `rest.api` (`clientOptions: { rest: { api: fake.restApi } }`). */
  get restApi(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  /** What `GET /gateway/bot` answers: the fake's own WebSocket endpoint. */
  get gatewayUrl(): string {
    return `ws://127.0.0.1:${this.port}/gateway`;
  }

  /** The guilds whose events go to `shard`. */
  private guildsOn(shard: number): FakeDiscordGuild[] {
    return [...this.guilds.values()].filter(
      (guild) => this.gateway.shardOf('GUILD_CREATE', guild) === shard,
    );
  }

  /** The shard a guild's events go to (`(guild_id >> 22) % shards`). */
  shardOf(guildId: string): number {
    return this.gateway.shardOf('MESSAGE_CREATE', { guild_id: guildId });
  }

  /** Every IDENTIFY received (token, intents, shard). */
  get identifies(): readonly FakeDiscordIdentify[] {
    return this.gateway.identifies;
  }

  /** How many RESUMEs the fake accepted. */
  get resumes(): number {
    return this.gateway.resumes;
  }

  /**
   * How many RESUMEs it refused with op 9 INVALID_SESSION (`d: false`), as Discord does for a
   * session it no longer knows: the client then identifies a new one.
   */
  get invalidSessions(): number {
    return this.gateway.invalidSessions;
  }

  /**
   * Every dispatch written to an open gateway connection, in order, RESUME replays included.
   * Discord has no acknowledgement: this is what it counts as delivered. A dispatch made while
   * no client is connected waits in the session for a RESUME (and is lost to a new IDENTIFY).
   */
  get delivered(): readonly FakeDiscordDispatch[] {
    return this.gateway.delivered;
  }

  /** Adds a guild with text channels; dispatches GUILD_CREATE when a client is connected. */
  addGuild(init: { id: string; name: string; channels?: FakeDiscordChannelInit[] }): void {
    const guild: FakeDiscordGuild = { id: init.id, name: init.name, channels: [], threads: [] };
    for (const channel of init.channels ?? []) {
      const full = guildChannel(init.id, channel);
      guild.channels.push(full);
      this.channels.set(full.id, full);
    }
    this.guilds.set(guild.id, guild);
    this.gateway.dispatch('GUILD_CREATE', guildCreatePayload(guild, this.botUser));
  }

  /** Adds a public thread under a guild channel; dispatches THREAD_CREATE when connected. */
  addThread(init: { id: string; guildId: string; parentId: string; name: string }): void {
    const guild = this.guilds.get(init.guildId);
    if (!guild) throw new Error(`FakeDiscord: unknown guild ${init.guildId}`);
    const thread = threadChannel({ ...init, ownerId: this.botUser.id });
    guild.threads.push(thread);
    this.channels.set(thread.id, thread);
    this.gateway.dispatch('THREAD_CREATE', { ...thread, newly_created: true });
  }

  /** Adds a DM channel between the bot and `recipient` (DMs arrive without a guild). */
  addDmChannel(init: { id: string; recipient: FakeDiscordUser }): void {
    this.channels.set(init.id, {
      id: init.id,
      type: CHANNEL_TYPE.DM,
      recipients: [init.recipient],
      last_message_id: null,
    });
  }

  /** The DM channel with `recipientId` (Discord's create DM): the one there is, else a new one. */
  dmWith(recipientId: string): FakeDiscordChannel {
    for (const channel of this.channels.values()) {
      const recipient = channel.recipients?.[0];
      if (channel.type === CHANNEL_TYPE.DM && recipient?.id === recipientId) return channel;
    }
    const id = this.nextId();
    this.addDmChannel({ id, recipient: { id: recipientId, username: `user${recipientId}` } });
    return this.channels.get(id)!;
  }

  /** A person (or another bot) posts: stores the message and dispatches MESSAGE_CREATE. */
  userMessage(init: FakeDiscordUserMessage): FakeDiscordMessage {
    const message = this.createMessage({
      channelId: init.channelId,
      author: init.author,
      content: init.content,
      mentions: init.mentions,
      referencedMessage: init.referencedMessage,
      nick: init.nick,
      stickers: init.stickers,
      files: init.files,
    });
    this.gateway.dispatch('MESSAGE_CREATE', message);
    return message;
  }

  /**
   * People keep writing: `message(i)` is posted with `userMessage` `perSecond` times a second
   * until `stop()`, whether or not the bot is connected.
   *
   * @example
   * ```ts
   * const traffic = discord.traffic(20, (i) => ({ channelId: GENERAL, author: alice, content: `#${i}` }));
   * await traffic.stop();
   * ```
   */
  traffic(perSecond: number, message: (index: number) => FakeDiscordUserMessage): SteadyTraffic {
    return steadyTraffic(perSecond, (index) => void this.userMessage(message(index)));
  }

  /** The author edits a message: new content and `edited_timestamp`, then MESSAGE_UPDATE. */
  editMessage(init: { messageId: string; content: string }): FakeDiscordMessage {
    const message = this.requireMessage(init.messageId);
    message.content = init.content;
    message.edited_timestamp = new Date().toISOString().replace('Z', '000+00:00');
    this.gateway.dispatch('MESSAGE_UPDATE', message);
    return message;
  }

  /** The author deletes a message: MESSAGE_DELETE with its id, channel and guild. */
  deleteMessage(init: { messageId: string }): void {
    const message = this.requireMessage(init.messageId);
    this.messages.delete(message.id);
    this.gateway.dispatch('MESSAGE_DELETE', {
      id: message.id,
      channel_id: message.channel_id,
      ...(message.guild_id !== undefined && { guild_id: message.guild_id }),
    });
  }

  /**
   * A moderator deletes several messages of one channel at once: one MESSAGE_DELETE_BULK with
   * their ids, as Discord sends for a bulk delete (or a ban that purges messages).
   */
  bulkDelete(init: { channelId: string; messageIds: string[] }): void {
    const channel = this.channels.get(init.channelId);
    if (!channel) throw new Error(`FakeDiscord: unknown channel ${init.channelId}`);
    for (const id of init.messageIds) this.messages.delete(id);
    this.gateway.dispatch('MESSAGE_DELETE_BULK', {
      ids: init.messageIds,
      channel_id: channel.id,
      ...(channel.guild_id !== undefined && { guild_id: channel.guild_id }),
    });
  }

  /** Sends any dispatch as is (for malformed or unusual payloads). Returns its sequence number. */
  dispatch(t: string, d: unknown): number {
    return this.gateway.dispatch(t, d);
  }

  /**
   * A person adds (or, with `removed`, takes back) a reaction: MESSAGE_REACTION_ADD / _REMOVE,
   * sent only when the bot identified with the reaction intent of the message's channel
   * (GuildMessageReactions, DirectMessageReactions), as Discord does. Answers whether it was.
   */
  react(init: {
    messageId: string;
    user: FakeDiscordUser;
    emoji: { id: string | null; name: string | null };
    removed?: boolean;
  }): boolean {
    const message = this.requireMessage(init.messageId);
    const inGuild = message.guild_id !== undefined;
    const intent = inGuild ? 1 << 10 : 1 << 13;
    const intents = this.gateway.identifies.at(-1)?.intents ?? 0;
    if ((intents & intent) === 0) return false;
    this.gateway.dispatch(
      init.removed === true ? 'MESSAGE_REACTION_REMOVE' : 'MESSAGE_REACTION_ADD',
      {
        user_id: init.user.id,
        channel_id: message.channel_id,
        message_id: message.id,
        ...(inGuild && { guild_id: message.guild_id, member: { ...memberOf(), user: init.user } }),
        emoji: init.emoji,
        ...(init.removed !== true && {
          message_author_id: message.author.id,
          burst: false,
          type: 0,
        }),
      },
    );
    return true;
  }

  /** Sends the last `count` dispatches again on the open connection (duplicate delivery). */
  replayLastEvents(count: number): void {
    this.gateway.replayLast(count);
  }

  /**
   * Tells the client to reconnect (op 7); resolves once it has RESUMEd. With `replayLast`, the
   * fake re-delivers that many events the client had already seen, as after a lost ACK.
   */
  forceReconnect(options: { replayLast?: number } = {}): Promise<void> {
    return this.gateway.reconnect(options.replayLast ?? 0);
  }

  /** The next message POST fails with this answer (queue several for several failures). */
  failNext(failure: FakeDiscordFailure): void {
    this.failures.push(failure);
  }

  /**
   * Resolves with what the bot posted once `condition` holds: a count of posts, or a predicate
   * that some post satisfies (then resolves with the matching posts).
   */
  waitForPosted(
    condition: number | ((message: FakeDiscordMessage) => boolean),
    timeoutMs = 15_000,
  ): Promise<FakeDiscordMessage[]> {
    const check = (): FakeDiscordMessage[] | undefined => {
      if (typeof condition === 'number') {
        return this.posted.length >= condition ? this.posted.slice(0, condition) : undefined;
      }
      const matching = this.posted.filter(condition);
      return matching.length > 0 ? matching : undefined;
    };
    return new Promise((resolve, reject) => {
      const done = check();
      if (done) return resolve(done);
      const onPosted = () => {
        const result = check();
        if (!result) return;
        clearTimeout(timer);
        this.events.off('posted', onPosted);
        resolve(result);
      };
      const timer = setTimeout(() => {
        this.events.off('posted', onPosted);
        reject(new Error(`FakeDiscord: waited ${timeoutMs} ms; ${this.posted.length} posted`));
      }, timeoutMs);
      this.events.on('posted', onPosted);
    });
  }

  /**
   * Resolves with the REST requests that match `predicate` once there are at least `count`
   * (default 1).
   *
   * @example
   * ```ts
   * const [typing] = await discord.waitForRequest((r) => r.path.endsWith('/typing'));
   * ```
   */
  waitForRequest(
    predicate: (request: FakeDiscordRequest) => boolean,
    count = 1,
    timeoutMs = 15_000,
  ): Promise<FakeDiscordRequest[]> {
    const matching = () => this.requests.filter(predicate);
    return new Promise((resolve, reject) => {
      if (matching().length >= count) return resolve(matching());
      const onRequest = () => {
        if (matching().length < count) return;
        clearTimeout(timer);
        this.events.off('request', onRequest);
        resolve(matching());
      };
      const timer = setTimeout(() => {
        this.events.off('request', onRequest);
        reject(new Error(`FakeDiscord: waited ${timeoutMs} ms for a request`));
      }, timeoutMs);
      this.events.on('request', onRequest);
    });
  }

  /** Stops the server and drops every connection. */
  async close(): Promise<void> {
    this.gateway.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private restHost(edits: EditWindow): RestHost {
    return {
      token: this.token,
      botUser: this.botUser,
      gatewayUrl: this.gatewayUrl,
      shards: this.shards,
      channel: (id) => this.channels.get(id),
      dmWith: (recipientId) => this.dmWith(recipientId),
      message: (id) => this.messages.get(id),
      nextFailure: () => this.failures.shift(),
      edits,
      post: (channel, content, referencedMessage, nonce) => {
        const key = nonce === undefined ? undefined : String(nonce.value);
        const kept = key === undefined ? undefined : this.nonces.get(key);
        if (nonce?.enforce && kept !== undefined && Date.now() - kept.at < this.nonceWindowMs) {
          return kept.message;
        }
        const message = this.createMessage({
          channelId: channel.id,
          author: this.botUser,
          content,
          referencedMessage,
        });
        if (nonce !== undefined) {
          message.nonce = nonce.value;
          if (nonce.enforce) this.nonces.set(String(nonce.value), { message, at: Date.now() });
        }
        this.posted.push(message);
        this.events.emit('posted', message);
        if (this.echo) this.gateway.dispatch('MESSAGE_CREATE', message);
        return message;
      },
      answerDelay: () => this.answerDelay.wait(),
      attach: (channelId, uploads, payload) => {
        const about = (payload as { attachments?: { id?: unknown; description?: string }[] })
          .attachments;
        const files = uploads.map((part, i) => ({
          name: part.filename ?? 'unknown',
          mimeType: part.contentType ?? 'application/octet-stream',
          content: part.bytes,
          ...(about?.[i]?.description !== undefined && { description: about[i]!.description }),
        }));
        const attachments = this.files.attach(channelId, files, () => this.nextId());
        this.uploads.push(...files.map((file, i) => ({ ...file, attachment: attachments[i]! })));
        return attachments;
      },
      react: (channelId, messageId, emoji) =>
        void this.botReactions.push({ channelId, messageId, emoji }),
      edit: (messageId, content) => this.editMessage({ messageId, content }),
      remove: (messageId) => this.deleteMessage({ messageId }),
      interactions: (method, route, body) => this.interactions.handle(method, route, body),
      record: (request) => {
        this.requests.push(request);
        this.events.emit('request', request);
      },
    };
  }

  private createMessage(init: FakeDiscordUserMessage): FakeDiscordMessage {
    const channel = this.channels.get(init.channelId);
    if (!channel) throw new Error(`FakeDiscord: unknown channel ${init.channelId}`);
    let referenced: FakeDiscordMessage | undefined;
    if (init.referencedMessage !== undefined) {
      const { referenced_message: _nested, ...rest } = this.requireMessage(init.referencedMessage);
      referenced = rest;
    }
    const message = messagePayload({
      id: this.nextId(),
      channel,
      author: init.author,
      content: init.content,
      nick: init.nick,
      mentions: init.mentions?.map((user) =>
        channel.guild_id === undefined ? user : { ...user, member: memberOf() },
      ),
      referenced,
      stickers: init.stickers,
    });
    if (init.files !== undefined && init.files.length > 0) {
      message.attachments = this.files.attach(channel.id, init.files, () => this.nextId());
      if (init.files.some((file) => file.voice === true)) message.flags |= IS_VOICE_MESSAGE;
    }
    this.messages.set(message.id, message);
    return message;
  }

  private requireMessage(id: string): FakeDiscordMessage {
    const message = this.messages.get(id);
    if (!message) throw new Error(`FakeDiscord: unknown message ${id}`);
    return message;
  }
}
