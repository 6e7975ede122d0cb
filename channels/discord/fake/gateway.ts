import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

/** Gateway opcodes (https://discord.com/developers/docs/topics/opcodes-and-status-codes). */
const OP = {
  DISPATCH: 0,
  HEARTBEAT: 1,
  IDENTIFY: 2,
  RESUME: 6,
  RECONNECT: 7,
  INVALID_SESSION: 9,
  HELLO: 10,
  HEARTBEAT_ACK: 11,
} as const;

/** What a client sent in IDENTIFY. */
export interface FakeDiscordIdentify {
  token: string;
  intents: number;
  shard?: [number, number];
}

/** A dispatch (op 0) with its sequence number. */
export interface FakeDiscordDispatch {
  s: number;
  t: string;
  d: unknown;
}

/** How many dispatches a session keeps for RESUME to replay. */
const RESUME_BUFFER = 10_000;

export interface GatewayHooks {
  token: string;
  heartbeatInterval: number;
  /** How many shards the bot must run (what `GET /gateway/bot` recommends). */
  shards: number;
  /** READY's `d` for `shard`, built when a client identifies. */
  ready(sessionId: string, resumeUrl: string, shard: number): object;
  /** Dispatches to send right after READY on `shard` (GUILD_CREATE per guild of it). */
  afterReady(shard: number): Array<{ t: string; d: unknown }>;
}

/** One shard's session: its connection, sequence and what RESUME replays. */
interface ShardSession {
  socket: WebSocket | undefined;
  sessionId: string;
  seq: number;
  log: FakeDiscordDispatch[];
  replayOnResume: number;
}

/**
 * The gateway half of FakeDiscord: JSON over a WebSocket, one session per shard, with
 * HELLO → IDENTIFY → READY, heartbeat ACKs, RESUME with replay of missed events, and
 * dispatches carrying increasing sequence numbers. A guild's events go to the shard Discord
 * would send them to (`(guild_id >> 22) % shards`), direct messages to shard 0. A client that
 * closes with 1000 or 1001 ends its session, as on Discord; any other close keeps it for RESUME.
 */
export class FakeGateway {
  readonly identifies: FakeDiscordIdentify[] = [];
  /** How many RESUMEs the fake accepted. */
  resumes = 0;
  /** How many RESUMEs it refused (op 9 INVALID_SESSION, `d: false`: identify anew). */
  invalidSessions = 0;
  /**
   * Every dispatch written to an open connection, in order, replays included: what Discord
   * counts as delivered (it has no acknowledgement; a client that missed some RESUMEs).
   */
  readonly delivered: FakeDiscordDispatch[] = [];
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sessions = new Map<number, ShardSession>();
  private readonly resumedWaiters: Array<() => void> = [];

  constructor(
    private readonly hooks: GatewayHooks,
    private readonly url: () => string,
  ) {
    this.wss.on('connection', (socket) => this.onConnection(socket));
  }

  /** Hands an HTTP upgrade on `/gateway` to the WebSocket server. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(request, socket, head, (ws) => this.wss.emit('connection', ws, request));
  }

  /** The shard a dispatch goes to: its guild's (`id` of GUILD_CREATE), else shard 0. */
  shardOf(t: string, d: unknown): number {
    const data = (typeof d === 'object' && d !== null ? d : {}) as Record<string, unknown>;
    const guild = t === 'GUILD_CREATE' ? data.id : data.guild_id;
    if (typeof guild !== 'string' || !/^\d+$/.test(guild)) return 0;
    return Number((BigInt(guild) >> 22n) % BigInt(this.hooks.shards));
  }

  /**
   * Sends a dispatch on its shard with that session's next sequence number (kept for
   * RESUME). Returns its `s`; 0 when nobody has identified on the shard (Discord sends nothing).
   */
  dispatch(t: string, d: unknown): number {
    const session = this.sessions.get(this.shardOf(t, d));
    return session === undefined ? 0 : this.dispatchOn(session, t, d);
  }

  /** Sends the last `count` dispatches of `shard` again, with their original sequence numbers. */
  replayLast(count: number, shard = 0): void {
    const session = this.sessions.get(shard);
    for (const event of session?.log.slice(-count) ?? []) this.sendDispatch(session!, event);
  }

  /**
   * Asks the client of `shard` to reconnect (op 7). It comes back with RESUME; the fake replays
   * what it missed plus, with `replayLast`, that many events it had already received.
   */
  reconnect(replayLast = 0, shard = 0): Promise<void> {
    const session = this.sessions.get(shard);
    if (session === undefined) return Promise.resolve();
    session.replayOnResume = replayLast;
    const resumed = new Promise<void>((resolve) => this.resumedWaiters.push(resolve));
    this.send(session, { op: OP.RECONNECT, d: null });
    return resumed;
  }

  close(): void {
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
  }

  private dispatchOn(session: ShardSession, t: string, d: unknown): number {
    const event = { s: ++session.seq, t, d };
    session.log.push(event);
    if (session.log.length > RESUME_BUFFER) session.log.shift();
    this.sendDispatch(session, event);
    return event.s;
  }

  private send(session: ShardSession, payload: object): boolean {
    if (session.socket?.readyState !== 1) return false;
    session.socket.send(JSON.stringify(payload));
    return true;
  }

  private sendDispatch(session: ShardSession, event: FakeDiscordDispatch): void {
    if (this.send(session, { op: OP.DISPATCH, ...event })) this.delivered.push(event);
  }

  /** A connection gets dispatches once it has identified or resumed, as on Discord. */
  private onConnection(socket: WebSocket): void {
    socket.on('message', (data) => this.onPayload(socket, String(data)));
    socket.on('close', (code) => {
      for (const [shard, session] of this.sessions) {
        if (session.socket !== socket) continue;
        session.socket = undefined;
        // Closed with 1000 or 1001, a session is over: it cannot be RESUMEd.
        if (code === 1000 || code === 1001) this.sessions.delete(shard);
      }
    });
    socket.send(
      JSON.stringify({ op: OP.HELLO, d: { heartbeat_interval: this.hooks.heartbeatInterval } }),
    );
  }

  private onPayload(socket: WebSocket, text: string): void {
    let payload: { op?: number; d?: Record<string, unknown> | number | null };
    try {
      payload = JSON.parse(text) as typeof payload;
    } catch {
      socket.close(4002, 'Decode error');
      return;
    }
    const d = typeof payload.d === 'object' && payload.d !== null ? payload.d : {};
    switch (payload.op) {
      case OP.HEARTBEAT:
        socket.send(JSON.stringify({ op: OP.HEARTBEAT_ACK }));
        return;
      case OP.IDENTIFY:
        return this.onIdentify(socket, d);
      case OP.RESUME:
        return this.onResume(socket, d);
      default:
        return; // presence updates, voice state, request guild members: not modelled
    }
  }

  private onIdentify(socket: WebSocket, d: Record<string, unknown>): void {
    if (d.token !== this.hooks.token) {
      socket.close(4004, 'Authentication failed.');
      return;
    }
    const [shard, count] = Array.isArray(d.shard) ? (d.shard as [number, number]) : [0, 1];
    if (count !== this.hooks.shards) {
      socket.close(this.hooks.shards > 1 ? 4011 : 4010, 'Sharding required.');
      return;
    }
    if (!Number.isInteger(shard) || shard < 0 || shard >= count) {
      socket.close(4010, 'Invalid shard.');
      return;
    }
    this.identifies.push({
      token: String(d.token),
      intents: Number(d.intents),
      ...(Array.isArray(d.shard) && { shard: d.shard as [number, number] }),
    });
    const session: ShardSession = {
      socket,
      sessionId: randomUUID().replaceAll('-', ''),
      seq: 0,
      log: [],
      replayOnResume: 0,
    };
    this.sessions.set(shard, session);
    this.dispatchOn(session, 'READY', this.hooks.ready(session.sessionId, this.url(), shard));
    for (const event of this.hooks.afterReady(shard)) this.dispatchOn(session, event.t, event.d);
  }

  private onResume(socket: WebSocket, d: Record<string, unknown>): void {
    const session = [...this.sessions.values()].find((s) => s.sessionId === d.session_id);
    if (d.token !== this.hooks.token || session === undefined) {
      this.invalidSessions++;
      socket.send(JSON.stringify({ op: OP.INVALID_SESSION, d: false }));
      return;
    }
    this.resumes++;
    session.socket = socket;
    const after = Number(d.seq);
    const missed = session.log.filter((event) => event.s > after);
    const count = session.replayOnResume;
    const again = count > 0 ? session.log.filter((event) => event.s <= after).slice(-count) : [];
    session.replayOnResume = 0;
    for (const event of [...again, ...missed]) this.sendDispatch(session, event);
    this.send(session, { op: OP.DISPATCH, s: session.seq, t: 'RESUMED', d: {} });
    for (const resolve of this.resumedWaiters.splice(0)) resolve();
  }
}
