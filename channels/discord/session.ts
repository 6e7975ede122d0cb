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

/** What is kept per shard in the store's `colloquy_state`, under `discord:gateway:<shard>`. */
interface KeptSession {
  session: SessionInfo;
  user?: SessionUser;
}

/**
 * The Discord gateway session of each shard, kept in the store so a restarted bot RESUMEs and
 * Discord replays what arrived while it was down. `@discordjs/ws` asks its manager's
 * `retrieveSessionInfo` before connecting and tells `updateSessionInfo` of every change;
 * discord.js keeps both in memory only. `attach` wraps them: before the library has a session
 * of its own, the kept one is returned; a new session (READY) or a dropped one (invalid
 * session) is kept at once; and the sequence is moved on only by `committed`, once an event
 * has been handed to the bot, so a RESUME never skips an event that was not committed.
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
  /** The bot user of each shard's session, from READY or from the store. */
  readonly #users = new Map<number, SessionUser>();
  /** Shards that connected by RESUMEing a kept session (and got no READY). */
  readonly resumed = new Set<number>();

  constructor(private readonly state: () => ChannelState | undefined) {}

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
      if (kept === undefined) return null;
      this.resumed.add(shardId);
      if (kept.user !== undefined) this.#users.set(shardId, kept.user);
      return kept.session;
    };
    options.updateSessionInfo = async (shardId, info) => {
      const before = this.#live.get(shardId) ?? undefined;
      this.#live.set(shardId, info);
      await update(shardId, info);
      if (info === null) {
        this.resumed.delete(shardId);
        await this.#keep(shardId, null);
      } else if (before === undefined || before.sessionId !== info.sessionId) {
        if (!this.resumed.has(shardId)) this.#users.delete(shardId); // a fresh READY
        await this.#keep(shardId, info);
      }
    };
  }

  /** The bot user READY named on a fresh session (discord.js sets `client.user` then). */
  ready(shardId: number, user: SessionUser): void {
    this.resumed.delete(shardId);
    this.#users.set(shardId, user);
    const session = this.#live.get(shardId);
    if (session) void this.#keep(shardId, session);
  }

  /** The bot user of a RESUMEd session, as kept with it. */
  user(shardId: number): SessionUser | undefined {
    return this.#users.get(shardId);
  }

  /** Event `sequence` of `shardId` has been handed to the bot: RESUME from after it. */
  committed(shardId: number, sequence: number | null | undefined): void {
    const session = this.#live.get(shardId);
    if (!session || typeof sequence !== 'number') return;
    void this.#keep(shardId, { ...session, sequence });
  }

  async #load(shardId: number): Promise<KeptSession | undefined> {
    const value = await this.state()
      ?.get(keyOf(shardId))
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
    const user = this.#users.get(shardId);
    const value = session === null ? null : JSON.stringify({ session, user });
    await this.state()
      ?.set(keyOf(shardId), value)
      .catch(() => undefined); // reported by capture; the next event keeps it again
  }
}

function keyOf(shardId: number): string {
  return `discord:gateway:${shardId}`;
}
