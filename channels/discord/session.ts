import type { SessionInfo, WebSocketOptions } from 'discord.js';
import type { ChannelState } from '../../src/channel.js';

/** The `@discordjs/ws` manager a sharding strategy is built for. */
type ShardManager = Parameters<NonNullable<WebSocketOptions['buildStrategy']>>[0];

/** The bot user READY named, kept with the session: a RESUMEd connection gets no READY. */
export interface SessionUser {
  id: string;
  username: string;
  globalName?: string | null;
}

/**
 * What is kept per shard in the store's `colloquy_state`, under `discord:gateway:<bot>:<shard>`
 * (the bot's user id, read from its token; `discord:gateway:<shard>` when the token does not
 * name one), so bots that share a store each RESUME their own session.
 */
interface KeptSession {
  session: SessionInfo;
  user?: SessionUser;
}

/**
 * The Discord gateway session of each shard, kept in the store so a restarted bot RESUMEs and
 * Discord replays what arrived while it was down. `@discordjs/ws` asks its manager's
 * `retrieveSessionInfo` before connecting and tells `updateSessionInfo` of every change,
 * before it hands the event on; discord.js keeps both in memory only. `attach` wraps them:
 * before the library has a session of its own, the kept one is returned and becomes the
 * library's (so a RESUME that replays nothing newer still finds it); a new session
 * (READY) or a dropped one (invalid session) is kept at once; and the kept sequence moves on
 * only by `committed`, once an event has been handed to the bot, so it never runs ahead of
 * what is stored and a RESUME never skips an event.
 *
 * @example
 * ```ts
 * const sessions = new GatewaySessions(() => handlers.state);
 * new Client({ ws: { buildStrategy: (manager) => (sessions.attach(manager), strategy(manager)) } });
 * ```
 */
export class GatewaySessions {
  /** Shards whose session the library has set in this process (null: it dropped it). */
  readonly #live = new Map<number, SessionInfo | null>();
  /** What is kept in the store for each shard: its session at the last committed event. */
  readonly #kept = new Map<number, SessionInfo>();
  /** The bot user of each shard's session, from READY or from the store. */
  readonly #users = new Map<number, SessionUser>();
  /** Shards that connected by RESUMEing a kept session (and got no READY). */
  readonly resumed = new Set<number>();
  /** Those waiting for a shard's bot user (`userKnown`). */
  readonly #waiting = new Map<number, (() => void)[]>();
  /** Shards being closed on purpose: what the library says of them now is not kept. */
  readonly #closing = new Set<number>();

  /** `bot`: the bot's user id, as its token names it (undefined when it names none). */
  constructor(
    private readonly state: () => ChannelState | undefined,
    private readonly bot: () => string | undefined = () => undefined,
  ) {}

  /** Makes `manager` read and keep its sessions here. */
  attach(manager: ShardManager): void {
    const options = manager.options as {
      retrieveSessionInfo(shardId: number): SessionInfo | null | Promise<SessionInfo | null>;
      updateSessionInfo(shardId: number, info: SessionInfo | null): void | Promise<void>;
    };
    const retrieve = options.retrieveSessionInfo.bind(options);
    const update = options.updateSessionInfo.bind(options);
    options.retrieveSessionInfo = async (shardId) => {
      if (this.#live.has(shardId)) return retrieve(shardId);
      const kept = await this.#load(shardId);
      if (this.#live.has(shardId)) return retrieve(shardId); // set while the store answered
      if (kept === undefined) return null;
      this.resumed.add(shardId);
      this.#kept.set(shardId, kept.session);
      if (kept.user !== undefined) this.#setUser(shardId, kept.user);
      // The library's own state starts from the kept session too: discord.js reads it when
      // RESUMED arrives, and a RESUME with nothing newer to replay would leave it empty.
      this.#live.set(shardId, kept.session);
      await update(shardId, kept.session);
      return kept.session;
    };
    options.updateSessionInfo = async (shardId, info) => {
      this.#live.set(shardId, info);
      await update(shardId, info);
      if (this.#closing.has(shardId)) return;
      if (info === null) {
        this.resumed.delete(shardId);
        this.#kept.delete(shardId);
        await this.#keep(shardId, null);
      } else if (this.#kept.get(shardId)?.sessionId !== info.sessionId) {
        // A new session (READY): nothing before its own sequence can be missed. Not awaited:
        // the library holds this event until it returns, while later frames go past it.
        this.resumed.delete(shardId);
        void this.#keep(shardId, info);
      }
      // Otherwise only the sequence moved: kept by `committed`, once the event is handed over.
    };
  }

  /** READY named the bot user: kept with the session for a RESUME in a later process. */
  ready(shardId: number, user: SessionUser): void {
    this.#setUser(shardId, user);
    const kept = this.#kept.get(shardId);
    if (kept) void this.#keep(shardId, kept);
  }

  /**
   * Resolves once `shardId`'s bot user is known (READY, or the kept session), or `release`d:
   * the library may hand over events that came after READY before READY itself.
   */
  userKnown(shardId: number): Promise<void> {
    if (this.#users.has(shardId)) return Promise.resolve();
    return new Promise((resolve) => {
      this.#waiting.set(shardId, [...(this.#waiting.get(shardId) ?? []), resolve]);
    });
  }

  /** Stops waiting for a bot user (a RESUME with none kept, or the channel stopping). */
  release(shardId?: number): void {
    for (const [shard, waiting] of this.#waiting) {
      if (shardId !== undefined && shard !== shardId) continue;
      this.#waiting.delete(shard);
      for (const resolve of waiting) resolve();
    }
  }

  #setUser(shardId: number, user: SessionUser): void {
    this.#users.set(shardId, user);
    this.release(shardId);
  }

  /** The bot user of any shard's session (they all name the same bot). */
  anyUser(): SessionUser | undefined {
    return this.#users.values().next().value;
  }

  /**
   * The channel is closing `shardIds` on purpose (stopping, or its lease let go): the session
   * the store keeps stays as it is, for the next client (here or on another instance) to
   * RESUME, although the library drops its own.
   */
  closing(shardIds: Iterable<number>): void {
    for (const shardId of shardIds) this.#closing.add(shardId);
  }

  /**
   * Forgets what this process knew of `shardId`'s session (its client is gone, the lease let
   * go): the next client on it starts from what the store keeps, as a new process would.
   */
  drop(shardId: number): void {
    this.#live.delete(shardId);
    this.#kept.delete(shardId);
    this.#closing.delete(shardId);
    this.resumed.delete(shardId);
    this.release(shardId);
  }

  /** The bot user of `shardId`'s session, from READY or as kept with a RESUMEd session. */
  user(shardId: number): SessionUser | undefined {
    return this.#users.get(shardId);
  }

  /** The id of the session `shardId` is on now (the one an arriving event belongs to). */
  sessionOf(shardId: number): string | undefined {
    return (this.#live.get(shardId) ?? this.#kept.get(shardId))?.sessionId;
  }

  /**
   * Event `sequence` of session `sessionId` has been handed to the bot: RESUME from after it.
   * An event of a session since replaced moves nothing.
   */
  committed(
    shardId: number,
    sessionId: string | undefined,
    sequence: number | null | undefined,
  ): void {
    const kept = this.#kept.get(shardId);
    if (!kept || kept.sessionId !== sessionId || typeof sequence !== 'number') return;
    if (sequence <= kept.sequence) return;
    void this.#keep(shardId, { ...(this.#live.get(shardId) ?? kept), sequence });
  }

  async #load(shardId: number): Promise<KeptSession | undefined> {
    const bot = this.bot();
    const kept = await this.#read(keyOf(shardId, bot));
    if (kept !== undefined || bot === undefined) return kept;
    // A session kept under the shard alone is this bot's only if it names this bot.
    const unnamed = await this.#read(keyOf(shardId, undefined));
    return unnamed?.user?.id === bot ? unnamed : undefined;
  }

  async #read(key: string): Promise<KeptSession | undefined> {
    const value = await this.state()
      ?.get(key)
      .catch(() => undefined);
    if (value === undefined) return undefined;
    try {
      const kept = JSON.parse(value) as KeptSession;
      return typeof kept.session?.sessionId === 'string' ? kept : undefined;
    } catch {
      return undefined;
    }
  }

  async #keep(shardId: number, session: SessionInfo | null): Promise<void> {
    if (session) this.#kept.set(shardId, session);
    const user = this.#users.get(shardId);
    const value = session === null ? null : JSON.stringify({ session, user });
    await this.state()
      ?.set(keyOf(shardId, this.bot()), value)
      .catch(() => undefined); // reported by capture; the next event keeps it again
  }
}

function keyOf(shardId: number, bot: string | undefined): string {
  return bot === undefined ? `discord:gateway:${shardId}` : `discord:gateway:${bot}:${shardId}`;
}
