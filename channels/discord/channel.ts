import type { PostPlace } from '../../src/posts.js';
import { GatewaySessions } from './session.js';
import {
  Client,
  Events,
  GatewayIntentBits,
  Partials,
  Routes,
  type ClientOptions,
  type WebSocketOptions,
  type GatewayDispatchPayload,
} from 'discord.js';
import type {
  ActionsEdit,
  BotIdentity,
  Channel,
  CommandSpec,
  ChannelHandlers,
  MessageRef,
  OutboundMessage,
  SendOptions,
  ReplyStream,
  SentMessage,
  StreamOptions,
  TypingIndicator,
  UnsettledReply,
} from '../../src/channel.js';
import {
  ColloquyError,
  MalformedEventError,
  NetworkError,
  PlatformError,
} from '../../src/errors.js';
import { addSecret, redactError } from '../../src/logger.js';
import { filesOnly, filesSent } from '../shared/files.js';
import { sendParts } from '../shared/platform.js';
import { sendDiscordFiles } from './files.js';
import {
  DEFAULT_ALLOWED_MENTIONS,
  DISCORD_NONCE_WINDOW_MS,
  formatOutbound,
  toColloquyError,
  type DiscordAllowedMentions,
} from './format.js';
import { guardedSharding } from './guard.js';
import { discordTyping } from './typing.js';
import { discordStream } from './stream.js';
import { componentsOf, DiscordInteractions, withComponents } from './interactions.js';
import { leaseNames } from '../../src/leases.js';
import {
  discordPostPlace,
  lacksContent,
  parseMessageCreate,
  parseMessageDelete,
  parseMessageDeleteBulk,
  parseMessageUpdate,
  type DiscordChannelInfo,
  type DiscordParseContext,
} from './parse.js';
import { discordReaction, REACTION_EVENTS } from './reactions.js';
import { discordDownload } from './download.js';
import type {
  AttachmentFetchOptions,
  FetchedAttachment,
  MessageAttachment,
} from '../../src/attachments.js';

/**
 * The gateway intents colloquy asks for by default: guilds (channel and thread cache), guild
 * and direct messages, message content, and reactions in guilds and DMs. MessageContent is privileged: switch on "Message
 * Content Intent" under Bot → Privileged Gateway Intents in the Developer Portal, or Discord
 * sends messages with empty content (except those that mention the bot, and DMs).
 */
export const DEFAULT_DISCORD_INTENTS: readonly GatewayIntentBits[] = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.DirectMessages,
  GatewayIntentBits.MessageContent,
  GatewayIntentBits.GuildMessageReactions,
  GatewayIntentBits.DirectMessageReactions,
];

export interface DiscordChannelOptions {
  /** The bot token (Developer Portal → Bot → Token). Not needed with a logged-in `client`. */
  token?: string;
  /** Gateway intents (default {@link DEFAULT_DISCORD_INTENTS}). */
  intents?: ClientOptions['intents'];
  /** Passed to `new Client()`, for example `{ rest: { api: 'http://127.0.0.1:PORT/api' } }`. */
  clientOptions?: Partial<ClientOptions>;
  /** An existing discord.js client to use instead of creating one; it is not destroyed on stop. */
  client?: Client;
  /** Who replies may ping (default: users only, never @everyone or roles). */
  allowedMentions?: DiscordAllowedMentions;
  /**
   * How many gateway shards the bot runs (default `clientOptions.shardCount`, else 1; Discord
   * requires one per 2,500 guilds). Alone, the channel runs them all; with other instances on
   * the store, each shard is held by one instance at a time, under a lease.
   */
  shardCount?: number;
  /**
   * Register the bot's commands on these guilds (they show at once there) instead of as
   * global commands (default).
   */
  commandGuildIds?: readonly string[];
}

/**
 * Discord through discord.js: reads MESSAGE_CREATE / MESSAGE_UPDATE / MESSAGE_DELETE from the
 * gateway, posts replies through the REST API, and learns the bot's id from READY.
 *
 * @example
 * ```ts
 * import { Bot } from 'colloquy';
 * import { DiscordChannel } from 'colloquy/discord';
 *
 * const discord = new DiscordChannel({ token: process.env.DISCORD_BOT_TOKEN! });
 * const bot = new Bot({ channels: [discord], agents: [new SupportAgent()] });
 * await bot.start();
 * ```
 */
export class DiscordChannel implements Channel {
  readonly type = 'discord';
  /**
   * The discord.js client (yours, or the one the channel made). Sharing the store with other
   * instances, it only posts over REST: each shard this instance holds has a client of its own.
   */
  get client(): Client {
    return this.#client;
  }
  readonly #client: Client;
  /** Discord's typing indicator while an agent works on a reply (see `discordTyping`). */
  readonly typing: TypingIndicator = discordTyping(() => this.client.rest);
  /** Sharing the store with other instances: this one's turns at holding the shards. */
  private leading: { stop: AbortController; done: Promise<unknown> } | undefined;
  /** The gateway client of each shard this instance holds by lease. */
  private readonly gateways = new Map<number, Client>();
  private handlers: ChannelHandlers | undefined;
  private readonly ownsClient: boolean;
  /** Events parsed and handed over one after another, in the order the gateway sent them. */
  private queue: Promise<void> = Promise.resolve();
  private warnedAboutContent = false;
  /** The gateway sessions, kept in the store (see `GatewaySessions`). */
  private readonly sessions = new GatewaySessions(
    () => this.handlers?.state,
    () => botIdOf(this.options.token ?? this.client.token ?? ''),
  );
  /** Slash commands, buttons and selects (see `DiscordInteractions`). */
  private readonly interactions = new DiscordInteractions(
    () => this.client.rest,
    () => this.client.application?.id ?? this.client.user?.id ?? this.sessions.anyUser()?.id,
    (error, what) => this.handlers?.error(toColloquyError(error, what)),
  );
  /** Dispatches discord.js threw on (already reported): not reported again when parsed. */
  private readonly broken = new WeakSet<object>();

  constructor(private readonly options: DiscordChannelOptions) {
    this.ownsClient = options.client === undefined;
    addSecret(options.token);
    this.#client = options.client ?? this.newClient();
  }

  /** How many gateway shards the bot runs. */
  get shardCount(): number {
    return this.options.shardCount ?? this.options.clientOptions?.shardCount ?? 1;
  }

  /** An attachment's bytes, from Discord's CDN (see `discordDownload`). */
  fetchAttachment(
    file: MessageAttachment,
    options: AttachmentFetchOptions,
  ): Promise<FetchedAttachment> {
    return discordDownload(file, options, this.options.clientOptions?.rest?.api);
  }

  /** Known from READY (or, on a RESUMEd session, from the store), before `start` resolves. */
  get botIdentity(): BotIdentity | undefined {
    const user = this.client.user ?? this.sessions.anyUser();
    if (!user) return undefined;
    return {
      id: `discord:${user.id}`,
      username: user.username,
      displayName: user.globalName ?? user.username,
    };
  }

  /** A client of the channel's making, on `shards` (default: every shard). */
  private newClient(shards?: number[]): Client {
    const { options, shardCount } = this;
    const ws = options.clientOptions?.ws;
    return new Client({
      partials: [Partials.Channel, Partials.Message],
      ...options.clientOptions,
      ...((shardCount > 1 || shards !== undefined) && {
        shardCount,
        shards: shards ?? Array.from({ length: shardCount }, (_, shard) => shard),
      }),
      ws: { ...ws, buildStrategy: this.withSessions(ws?.buildStrategy) },
      intents: options.intents ?? options.clientOptions?.intents ?? [...DEFAULT_DISCORD_INTENTS],
    });
  }

  /**
   * Connects to the gateway. With other instances on the store (`handlers.lead`), each shard
   * is held by one instance at a time under its lease: the others stand by and take over
   * within the lease's ttl when it dies, RESUMEing the session it kept in the store (Discord
   * then replays what arrived meanwhile). Replies are posted by whichever instance answers,
   * over REST.
   */
  async start(handlers: ChannelHandlers): Promise<void> {
    this.handlers = handlers;
    const token = this.options.token ?? this.client.token ?? undefined;
    if (handlers.lead !== undefined && this.ownsClient && token !== undefined) {
      this.client.rest.setToken(token);
      const stop = new AbortController();
      const bot = botIdOf(token) ?? 'bot';
      const terms = Array.from({ length: this.shardCount }, (_, shard) =>
        handlers.lead!(
          leaseNames.discordShard(bot, shard),
          (signal) => this.holdShard(shard, token, signal),
          stop.signal,
        ),
      );
      this.leading = { stop, done: Promise.all(terms) };
      return;
    }
    await this.connect(this.client);
  }

  /**
   * One lease term on `shard`: a client of its own on the gateway until the lease is lost or
   * the channel stops. The next term, here or on another instance, RESUMEs from the store.
   */
  private async holdShard(shard: number, token: string, signal: AbortSignal): Promise<void> {
    const client = this.newClient([shard]);
    client.rest.setToken(token);
    this.gateways.set(shard, client);
    try {
      await this.connect(client);
      if (!signal.aborted) {
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      }
    } finally {
      this.gateways.delete(shard);
      this.detach(client);
      await this.close(client, [shard]);
      this.sessions.drop(shard);
    }
  }

  /**
   * Closes `client`'s gateway connections so that their sessions can be RESUMEd: with a code
   * other than 1000 (Discord ends a session closed with 1000 or 1001), and with the sessions
   * the store keeps left as they are. The next process, or the instance that takes a shard
   * over, RESUMEs and Discord replays what it sent meanwhile. Then destroys the client.
   */
  private async close(client: Client, shards: Iterable<number>): Promise<void> {
    this.sessions.closing(shards);
    const manager = (client.ws as unknown as { _ws?: { destroy(options: object): Promise<void> } })
      ._ws;
    await manager
      ?.destroy({ code: RESUMABLE_CLOSE, reason: 'colloquy hands the session over' })
      .catch(() => undefined);
    await client.destroy();
  }

  private async connect(client: Client): Promise<void> {
    client.on(Events.Raw, this.onRaw);
    client.on(Events.Error, this.onClientError);
    client.on(Events.ShardError, this.onClientError);
    client.on(Events.ShardDisconnect, this.onGatewayClosed);
    client.on(Events.ShardResume, this.onResumed);
    if (!client.isReady()) {
      const token = this.options.token ?? client.token ?? undefined;
      // A client of yours that the channel logs in gets the same guard, unless it has a strategy.
      client.options.ws ??= {};
      if (!this.ownsClient) {
        client.options.ws.buildStrategy = this.withSessions(client.options.ws.buildStrategy);
      }
      if (token === undefined) {
        this.detach(client);
        throw new PlatformError('discord', 'DiscordChannel needs a token (or a logged-in client)');
      }
      // A kept session is RESUMEd: Discord replays what was missed, and sends no READY.
      const ready = new Promise<void>((resolve) => {
        client.once(Events.ClientReady, () => resolve());
        client.once(Events.ShardResume, () => resolve());
      });
      try {
        await Promise.all([ready, client.login(token)]);
      } catch (error) {
        this.detach(client);
        throw toColloquyError(error, 'login');
      }
    }
    if (!this.botIdentity) throw new PlatformError('discord', 'Discord READY carried no user');
    if (!client.user) resumedWithoutReady(client);
  }

  /** `buildStrategy` keeping the gateway sessions in the store, around `inner` (or the guard). */
  private withSessions(
    inner: WebSocketOptions['buildStrategy'],
  ): NonNullable<WebSocketOptions['buildStrategy']> {
    const build = inner ?? guardedSharding(this.onBrokenPacket);
    return (manager) => {
      this.sessions.attach(manager);
      return build(manager);
    };
  }

  async stop(): Promise<void> {
    const leading = this.leading;
    this.leading = undefined;
    leading?.stop.abort();
    await leading?.done;
    this.detach(this.client);
    this.sessions.release();
    await this.queue;
    if (this.ownsClient) {
      const { token } = this.client;
      const shards = Array.from({ length: this.shardCount }, (_, shard) => shard);
      await this.close(this.client, shards);
      for (const shard of shards) this.sessions.drop(shard);
      // The replies the bot still finishes after the gateway closed go out over REST.
      if (token !== null) this.client.rest.setToken(token);
    }
  }

  /** Where a post into a Discord conversation goes (see `discordPostPlace`). */
  placeOf(conversationId: string): PostPlace | undefined {
    return discordPostPlace(conversationId);
  }

  /** The DM with a user, by their id: Discord's create DM (`POST /users/@me/channels`). */
  async openDm(platformUserId: string): Promise<string> {
    const dm = await this.client.users.createDM(platformUserId).catch((error: unknown) => {
      throw toColloquyError(error, `a DM with ${platformUserId}`, {});
    });
    return `discord:dm:${dm.id}`;
  }

  /**
   * Posts a reply, split into parts of at most 2000 characters, the first as a reply, each
   * with a nonce made of the reply's id and the part's index (`enforce_nonce`). Throws
   * `PlatformError` (Discord refused, or a 5xx), `RateLimitError` or `NetworkError` (see
   * `toColloquyError`); the parts that did get through were reported to `options.partPosted`.
   * The files come after the text, one message each; for files alone (no text) the ids
   * returned are those of the messages that carry them.
   */
  async send(message: OutboundMessage, options: SendOptions = {}): Promise<SentMessage> {
    const { channelId, bodies } = formatOutbound(
      message,
      this.options.allowedMentions ?? DEFAULT_ALLOWED_MENTIONS,
    );
    if (this.interactions.answers(message)) {
      const answered = await this.interactions.send(message, bodies).catch((error: unknown) => {
        throw toColloquyError(error, `the answer to interaction ${message.replyToMessageId}`, {
          conversationId: message.conversationId,
        });
      });
      if (answered !== undefined) return answered;
    }
    const report = (error: ColloquyError) => this.handlers?.error(error);
    const { rest } = this.client;
    // A message of files alone is named by the messages that carry them.
    if (filesOnly(message)) {
      return filesSent(
        (failed) => sendDiscordFiles(rest, channelId, message, failed),
        report,
        (first) => `discord:${channelId}:${first}`,
      );
    }
    const sent = await sendParts(
      withComponents(bodies, message),
      async (body) => {
        const posted = (await this.client.rest.post(Routes.channelMessages(channelId), {
          body,
        })) as { id: string; timestamp?: string };
        return {
          id: posted.id,
          ...(posted.timestamp && { timestamp: new Date(posted.timestamp).toISOString() }),
        };
      },
      (error, index) => {
        const part = bodies.length > 1 ? ` (part ${index + 1} of ${bodies.length})` : '';
        return toColloquyError(error, `a message in ${channelId}${part}`, {
          conversationId: message.conversationId,
        });
      },
      options,
    );
    const first = sent.messageIds[0];
    const text = first === undefined ? sent : { ...sent, id: `discord:${channelId}:${first}` };
    if (!message.files?.length) return text;
    return { ...text, files: (await sendDiscordFiles(rest, channelId, message, report)).files };
  }

  /** Adds the bot's reaction to a message (`PUT …/reactions/<emoji>/@me`, as `message.react`). */
  async react(message: MessageRef, emoji: string): Promise<void> {
    const channelId = message.threadId ?? message.channelId;
    try {
      await this.client.rest.put(
        Routes.channelMessageOwnReaction(channelId, message.messageId, encodeURIComponent(emoji)),
      );
    } catch (error) {
      throw toColloquyError(error, `a reaction in ${channelId}`);
    }
  }

  /**
   * Settles a reply a crash left unconfirmed: its parts after `confirmed` are posted again
   * with the same nonces, and Discord answers each with the message it created already, or
   * creates it. Discord keeps a nonce a few minutes: a reply recorded longer ago than that
   * (`DISCORD_NONCE_WINDOW_MS`) is left unconfirmed (`undefined`) rather than risk a second
   * copy.
   *
   * @example
   * ```ts
   * const sent = await discord.settle({ message, confirmed: [], recordedAt });
   * ```
   */
  async settle({
    message,
    confirmed,
    recordedAt,
  }: UnsettledReply): Promise<SentMessage | undefined> {
    const age = Date.now() - Date.parse(recordedAt);
    if (message.replyId === undefined || !(age < DISCORD_NONCE_WINDOW_MS)) return undefined;
    return this.send(message, { skipParts: confirmed.length });
  }

  /** Shows a reply as it is written: posted, then edited (see `discordStream`). */
  stream(message: OutboundMessage, options?: StreamOptions): ReplyStream {
    if (this.interactions.answers(message)) {
      return this.interactions.stream(message, (whole) => this.send(whole));
    }
    const mentions = this.options.allowedMentions ?? DEFAULT_ALLOWED_MENTIONS;
    return discordStream(this.client.rest, message, mentions, options);
  }

  /**
   * Shows the buttons and select of `edit` under the reply's last part, or, once a press is
   * answered, shows them disabled (`PATCH` of the message's components).
   */
  async editActions(edit: ActionsEdit): Promise<void> {
    const channelId = edit.threadId ?? edit.channelId;
    const messageId = edit.messageIds.at(-1) ?? '';
    const components = componentsOf(edit, { disabled: edit.chosen !== undefined });
    try {
      await this.client.rest.patch(Routes.channelMessage(channelId, messageId), {
        body: { components },
      });
    } catch (error) {
      throw toColloquyError(error, `the buttons of message ${messageId}`);
    }
  }

  /** Registers the commands as application commands (global, or on `commandGuildIds`). */
  async registerCommands(commands: readonly CommandSpec[]): Promise<void> {
    await this.interactions.register(commands, this.options.commandGuildIds);
  }

  private detach(client: Client): void {
    client.off(Events.Raw, this.onRaw);
    client.off(Events.Error, this.onClientError);
    client.off(Events.ShardError, this.onClientError);
    client.off(Events.ShardDisconnect, this.onGatewayClosed);
    client.off(Events.ShardResume, this.onResumed);
  }

  /** A RESUME of a session kept without its bot user (no READY will name it): go on without. */
  private readonly onResumed = (shardId: number): void => {
    this.sessions.release(shardId);
  };

  /** discord.js gave up on the gateway (a close code it will not reconnect after). */
  private readonly onGatewayClosed = (event: { code: number }): void => {
    this.handlers?.error(
      new PlatformError('discord', `The Discord gateway closed for good (code ${event.code})`, {
        code: String(event.code),
      }),
    );
  };

  /** discord.js threw while handling a dispatch (a malformed event); the gateway goes on. */
  private readonly onBrokenPacket = (packet: GatewayDispatchPayload, error: unknown): void => {
    this.broken.add(packet);
    this.handlers?.error(
      new MalformedEventError(
        `Malformed Discord ${String(packet.t)} (sequence ${String(packet.s)}): ${
          error instanceof Error ? error.message : String(error)
        }`,
        { cause: { error, payload: packet.d } },
      ),
    );
  };

  private readonly onClientError = (error: Error): void => {
    const cause = redactError(error);
    this.handlers?.error(new NetworkError(`Discord gateway: ${cause.message}`, { cause }));
  };

  /**
   * Every gateway dispatch passes here before discord.js handles it. Events are parsed and
   * handed to the runtime in the order they arrived, which commits each at once (Discord takes
   * no acknowledgement) before any agent works on it; the hand-over does not wait for the
   * commit, so events arriving together share one.
   */
  private readonly onRaw = (packet: GatewayDispatchPayload, shardId = 0): void => {
    if (packet.t === 'READY') {
      const user = (packet.d as Partial<typeof packet.d> | null)?.user;
      if (typeof user?.id === 'string') {
        this.sessions.ready(shardId, {
          id: user.id,
          username: user.username,
          globalName: user.global_name,
        });
      }
      return;
    }
    if (
      packet.t !== 'MESSAGE_CREATE' &&
      packet.t !== 'MESSAGE_UPDATE' &&
      packet.t !== 'MESSAGE_DELETE' &&
      packet.t !== 'MESSAGE_DELETE_BULK' &&
      packet.t !== 'INTERACTION_CREATE' &&
      !REACTION_EVENTS.has(packet.t)
    ) {
      return;
    }
    const session = this.sessions.sessionOf(shardId);
    const known = this.client.user ? undefined : this.sessions.userKnown(shardId);
    this.queue = this.queue
      .then(() => known)
      .then(() => this.dispatch(packet, shardId))
      .then(() => this.sessions.committed(shardId, session, packet.s));
  };

  private async dispatch(packet: GatewayDispatchPayload, shardId: number): Promise<void> {
    const handlers = this.handlers;
    if (!handlers) return;
    const event = packet.t;
    const data = packet.d as unknown;
    try {
      const context = await this.contextFor(data, shardId);
      if (REACTION_EVENTS.has(event)) {
        const change = discordReaction(event, data, context);
        if (change !== undefined && handlers.reaction !== undefined) {
          this.committed(handlers.reaction(change));
        }
      } else if (event === 'INTERACTION_CREATE') {
        const turn = this.interactions.turnOf(data, context);
        if (turn === undefined) return;
        const interaction = data as { id: string; token: string; type: number };
        // Acknowledged once committed: an interaction not committed fails on the person's side.
        const committed = handlers.message(turn);
        void committed.then(
          () => this.interactions.acknowledge(interaction),
          () => undefined,
        );
        this.committed(committed, turn.conversationId, turn.id);
      } else if (event === 'MESSAGE_CREATE') {
        const turn = parseMessageCreate(data, context);
        if ('ignored' in turn) return;
        if (!this.warnedAboutContent && lacksContent(data)) {
          this.warnedAboutContent = true;
          handlers.error(
            new PlatformError(
              'discord',
              'Discord sends messages without their text: switch on "Message Content Intent" ' +
                '(Developer Portal → Bot → Privileged Gateway Intents) and include ' +
                'GatewayIntentBits.MessageContent in the intents',
              { code: 'missing_message_content', conversationId: turn.conversationId },
            ),
          );
        }
        this.committed(handlers.message(turn), turn.conversationId, turn.id);
      } else if (event === 'MESSAGE_UPDATE') {
        const edit = parseMessageUpdate(data, context);
        if (!edit) return;
        this.committed(handlers.edit(edit));
      } else {
        const deletions =
          event === 'MESSAGE_DELETE_BULK'
            ? parseMessageDeleteBulk(data, context)
            : [parseMessageDelete(data, context)];
        for (const deletion of deletions) this.committed(handlers.delete(deletion));
      }
    } catch (error) {
      if (this.broken.has(packet)) return; // discord.js threw on it too: reported once, then
      handlers.error(
        error instanceof ColloquyError
          ? error
          : new MalformedEventError(`Could not read a Discord ${event}`, { cause: error }),
      );
    }
  }

  /** Reports an event the store could not commit (capture keeps retrying it). */
  private committed(commit: Promise<unknown>, conversationId?: string, messageId?: string): void {
    commit.catch((error: unknown) => {
      this.handlers?.error(
        error instanceof ColloquyError
          ? error
          : new ColloquyError('Handling a Discord event failed', {
              cause: error,
              conversationId,
              messageId,
            }),
      );
    });
  }

  /** What the payload lacks: the channel's type and name, and a thread's parent. */
  private async contextFor(data: unknown, shardId: number): Promise<DiscordParseContext> {
    const botUserId = this.client.user?.id ?? this.sessions.user(shardId)?.id;
    const siblings = (this.handlers?.botIds?.() ?? []).map((id) => id.slice('discord:'.length));
    const d = (typeof data === 'object' && data !== null ? data : {}) as {
      channel_id?: unknown;
      guild_id?: unknown;
    };
    const ours = { botUserId, siblings };
    if (typeof d.channel_id !== 'string') return ours;
    if (typeof d.guild_id !== 'string') return { ...ours, channel: { type: 1 } };
    const channel = await this.channelInfo(d.channel_id, shardId);
    return channel ? { ...ours, channel } : ours;
  }

  private async channelInfo(id: string, shardId: number): Promise<DiscordChannelInfo | undefined> {
    // The shard's own client has its guilds' channels cached.
    const client = this.gateways.get(shardId) ?? this.client;
    let channel = client.channels.cache.get(id) ?? null;
    if (!channel) {
      // Not cached (a thread the bot was just added to, say): ask the REST API once.
      channel = await client.channels.fetch(id).catch(() => null);
    }
    if (!channel) return undefined;
    const name = 'name' in channel && typeof channel.name === 'string' ? channel.name : undefined;
    if (!channel.isThread()) return { type: channel.type, ...(name !== undefined && { name }) };
    const parentName = channel.parent?.name;
    return {
      type: channel.type,
      ...(name !== undefined && { name }),
      ...(channel.parentId !== null && { parentId: channel.parentId }),
      ...(parentName !== undefined && { parentName }),
    };
  }
}

/** The close code of a session handed over (discord.js's own "resuming" code). */
const RESUMABLE_CLOSE = 4200;

/**
 * After a RESUME in a new process discord.js never sees READY, so it would queue every event
 * for a ready state that never comes (and hold them in memory): mark it ready. The channel
 * reads events from `Events.Raw` and channels through REST, so an empty cache is fine.
 */
function resumedWithoutReady(client: Client): void {
  const ws = client.ws as unknown as { triggerClientReady?: () => void };
  if (!client.isReady()) ws.triggerClientReady?.();
}

/**
 * The bot's user id, from its token (a token's first part is the id in base64): the gateway
 * lease's name before any instance has connected, and the key its sessions are kept under.
 */
function botIdOf(token: string): string | undefined {
  const id = Buffer.from(token.split('.')[0] ?? '', 'base64').toString('utf8');
  return /^\d+$/.test(id) ? id : undefined;
}
