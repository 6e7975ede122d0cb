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
  /** READY's `d`, built when a client identifies. */
  ready(sessionId: string, resumeUrl: string): object;
  /** Dispatches to send right after READY (GUILD_CREATE per guild). */
  afterReady(): Array<{ t: string; d: unknown }>;
}

/**
 * The gateway half of FakeDiscord: JSON over a WebSocket, one session at a time, with
 * HELLO → IDENTIFY → READY, heartbeat ACKs, RESUME with replay of missed events, and
 * dispatches carrying increasing sequence numbers.
 */
export class FakeGateway {
  readonly identifies: FakeDiscordIdentify[] = [];
  /** How many RESUMEs the fake accepted. */
  resumes = 0;
  /**
   * Every dispatch written to an open connection, in order, replays included: what Discord
   * counts as delivered (it has no acknowledgement; a client that missed some RESUMEs).
   */
  readonly delivered: FakeDiscordDispatch[] = [];
  private readonly wss = new WebSocketServer({ noServer: true });
  private socket: WebSocket | undefined;
  private sessionId: string | undefined;
  private seq = 0;
  private log: FakeDiscordDispatch[] = [];
  private replayOnResume = 0;
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

  /** True once a client has identified and a session is running. */
  get connected(): boolean {
    return this.socket !== undefined && this.sessionId !== undefined;
  }

  /** Sends a dispatch with the next sequence number (kept for RESUME). Returns its `s`. */
  dispatch(t: string, d: unknown): number {
    if (this.sessionId === undefined) return 0; // nobody has identified: Discord sends nothing
    const event = { s: ++this.seq, t, d };
    this.log.push(event);
    if (this.log.length > RESUME_BUFFER) this.log.shift();
    this.sendDispatch(event);
    return event.s;
  }

  /** Sends the last `count` dispatches again, with their original sequence numbers. */
  replayLast(count: number): void {
    for (const event of this.log.slice(-count)) this.sendDispatch(event);
  }

  /**
   * Asks the client to reconnect (op 7). It comes back with RESUME; the fake replays what it
   * missed plus, with `replayLast`, that many events it had already received.
   */
  reconnect(replayLast = 0): Promise<void> {
    this.replayOnResume = replayLast;
    const resumed = new Promise<void>((resolve) => this.resumedWaiters.push(resolve));
    this.send({ op: OP.RECONNECT, d: null });
    return resumed;
  }

  close(): void {
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
  }

  private send(payload: object): boolean {
    if (this.socket?.readyState !== 1) return false;
    this.socket.send(JSON.stringify(payload));
    return true;
  }

  private sendDispatch(event: FakeDiscordDispatch): void {
    if (this.send({ op: OP.DISPATCH, ...event })) this.delivered.push(event);
  }

  /** A connection gets dispatches once it has identified or resumed, as on Discord. */
  private onConnection(socket: WebSocket): void {
    socket.on('message', (data) => this.onPayload(socket, String(data)));
    socket.on('close', () => {
      if (this.socket === socket) this.socket = undefined;
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
    this.identifies.push({
      token: String(d.token),
      intents: Number(d.intents),
      ...(Array.isArray(d.shard) && { shard: d.shard as [number, number] }),
    });
    this.socket = socket;
    this.sessionId = randomUUID().replaceAll('-', '');
    this.seq = 0;
    this.log = [];
    this.dispatch('READY', this.hooks.ready(this.sessionId, this.url()));
    for (const event of this.hooks.afterReady()) this.dispatch(event.t, event.d);
  }

  private onResume(socket: WebSocket, d: Record<string, unknown>): void {
    if (d.token !== this.hooks.token || d.session_id !== this.sessionId) {
      socket.send(JSON.stringify({ op: OP.INVALID_SESSION, d: false }));
      return;
    }
    this.resumes++;
    this.socket = socket;
    const after = Number(d.seq);
    const missed = this.log.filter((event) => event.s > after);
    const count = this.replayOnResume;
    const again = count > 0 ? this.log.filter((event) => event.s <= after).slice(-count) : [];
    this.replayOnResume = 0;
    for (const event of [...again, ...missed]) this.sendDispatch(event);
    this.send({ op: OP.DISPATCH, s: this.seq, t: 'RESUMED', d: {} });
    for (const resolve of this.resumedWaiters.splice(0)) resolve();
  }
}
