/**
 * `FakeSlack`: a loopback Slack for tests and offline development. One real HTTP server on
 * 127.0.0.1 serves the Web API (`POST /api/<method>`, form or JSON bodies, bearer token
 * checked) and Socket Mode (`ws://127.0.0.1:<port>/socket`), and delivers Events API payloads
 * to the bot — signed over HTTP like Slack does, or as Socket Mode envelopes when the bot is
 * connected that way.
 *
 * @example
 * ```ts
 * import { FakeSlack } from 'colloquy/testing';
 * import { SlackChannel } from 'colloquy/slack';
 *
 * const slack = await FakeSlack.start();
 * const channel = new SlackChannel({
 *   token: slack.token,
 *   signingSecret: slack.signingSecret,
 *   port: 0,
 *   host: '127.0.0.1',
 *   clientOptions: { slackApiUrl: slack.slackApiUrl },
 * });
 * // … start a Bot with the channel, then:
 * slack.eventsUrl = channel.eventsUrl;
 * await slack.mention({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'status?' });
 * const [reply] = await slack.waitForPosted(1);
 * await slack.close();
 * ```
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeSlackFiles, type FakeSlackFile } from './fake/files.js';
import { WebSocketServer, type WebSocket } from 'ws';
import { steadyTraffic, type SteadyTraffic } from '../testing/traffic.js';
import { AnswerDelay } from '../testing/answer-delay.js';
import { FakeSlackInteractions } from './fake/interactions.js';
import { FakeSlackStreams } from './fake/stream.js';
import type {
  FakeSlackAcknowledged,
  FakeSlackDelivery,
  FakeSlackCall,
  FakeSlackDeleteInput,
  FakeSlackEditInput,
  FakeSlackFailure,
  FakeSlackHeldCall,
  FakeSlackMessageInput,
  FakeSlackOptions,
  FakeSlackPost,
  FakeSlackReaction,
  FakeSlackUser,
  FakeSlackSendOptions,
  FakeSlackWritten,
} from './fake/types.js';
import {
  answerWebApi,
  parseBody,
  readBody,
  signSlackRequest,
  type WebApiState,
} from './fake/web-api.js';

export type * from './fake/types.js';
export type { FakeSlackFile, FakeSlackUpload } from './fake/files.js';
export { signSlackRequest } from './fake/web-api.js';
export { FakeSlackInteractions } from './fake/interactions.js';
export type { FakeSlackInteractionAck } from './fake/interactions.js';

export class FakeSlack {
  readonly token: string;
  readonly appToken: string;
  readonly signingSecret: string;
  readonly teamId: string;
  /** The files people shared, served at their `url_private`. */
  readonly files: FakeSlackFiles;
  readonly teamName: string;
  readonly enterprise: { id: string; orgWideInstall?: boolean } | undefined;
  readonly bot: { userId: string; botId: string; name: string };
  /** Where HTTP events go: the bot's events URL (`SlackChannel#eventsUrl`). */
  eventsUrl: string | undefined;
  echoBotMessages: boolean;
  /** Messages the bot posted, in order. */
  readonly posted: FakeSlackPost[] = [];
  /** Every Web API call, in order. */
  readonly calls: FakeSlackCall[] = [];
  /**
   * Thread statuses shown now (`assistant.threads.setStatus`), by `<channel>:<thread_ts>`:
   * cleared by an empty status or by the bot's next post in the thread, as Slack does.
   */
  readonly statuses = new Map<string, string>();
  /** The bot's reactions on messages, now. */
  readonly reactions: FakeSlackReaction[] = [];
  /** Every event delivery that completed (HTTP answers and Socket Mode acks), in order. */
  readonly deliveries: FakeSlackDelivery[] = [];
  /** Socket Mode envelope ids the bot acknowledged. */
  readonly acks: string[] = [];
  /**
   * Events the bot acknowledged, in order: answered 2xx over HTTP (on any attempt) or acked over
   * Socket Mode. Slack never delivers these again.
   */
  readonly acknowledged: FakeSlackAcknowledged[] = [];
  /** Messages people wrote through `message` and `mention`, in order (what history reads). */
  readonly written: FakeSlackWritten[] = [];

  private readonly users = new Map<string, FakeSlackUser>();
  /** Slash commands and button presses, and how the bot acknowledged them. */
  readonly interactions: FakeSlackInteractions;
  private readonly channels = new Map<string, string>();
  private readonly failures = new Map<string, FakeSlackFailure[]>();
  private readonly holds = new Map<
    string,
    { arrive(call: FakeSlackCall): void; released: Promise<void>; done: boolean }[]
  >();
  private readonly releases = new Set<() => void>();
  private readonly waiters = new Set<() => void>();
  /** Socket Mode envelopes waiting for their ack: settled with 200 by an ack, 0 if the socket closes. */
  private readonly ackWaiters = new Map<string, (status: number) => void>();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly server: Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  private socket: WebSocket | undefined;
  private socketWaiters: (() => void)[] = [];
  private clock = 0;
  private readonly state: WebApiState;
  private readonly retry: { delaysMs: number[]; timeoutMs: number } | undefined;
  private readonly answerDelay: AnswerDelay;
  private readonly streams: FakeSlackStreams;

  private constructor(options: FakeSlackOptions) {
    this.token = options.token ?? 'xoxb-fake-token';
    this.appToken = options.appToken ?? 'xapp-fake-token';
    this.signingSecret = options.signingSecret ?? 'fake-signing-secret';
    this.teamId = options.teamId ?? 'T0FAKE';
    this.teamName = options.teamName ?? 'Fake Workspace';
    this.enterprise = options.enterprise;
    this.bot = {
      userId: options.bot?.userId ?? 'U0BOT',
      botId: options.bot?.botId ?? 'B0BOT',
      name: options.bot?.name ?? 'colloquy',
    };
    this.files = new FakeSlackFiles(() => this.url, this.teamId, {
      nextTs: () => this.nextTs(),
      botUserId: this.bot.userId,
      channelName: (id) => this.channels.get(id),
    });
    this.eventsUrl = options.eventsUrl;
    this.echoBotMessages = options.echoBotMessages ?? false;
    this.answerDelay = new AnswerDelay(options.answerDelayMs);
    if (options.retries !== undefined && options.retries !== false) {
      const { delaysMs = [100, 1000, 5000], timeoutMs = 3000 } =
        options.retries === true ? {} : options.retries;
      this.retry = { delaysMs, timeoutMs };
    }
    const users = options.users ?? { U0ALICE: 'Alice', U0BOB: 'Bob' };
    for (const [id, user] of Object.entries(users)) this.addUser(id, user);
    this.users.set(this.bot.userId, { name: this.bot.name, isBot: true });
    for (const [id, name] of Object.entries(options.channels ?? { C0GENERAL: 'general' })) {
      this.channels.set(id, name);
    }
    const url = () => this.url;
    this.state = {
      teamId: this.teamId,
      teamName: this.teamName,
      enterprise: this.enterprise,
      bot: this.bot,
      users: this.users,
      channels: this.channels,
      posted: this.posted,
      statuses: this.statuses,
      reactions: this.reactions,
      written: this.written,
      get url() {
        return url();
      },
      nextTs: () => this.nextTs(),
      onPosted: () => {
        for (const check of [...this.waiters]) check();
      },
    };
    this.interactions = new FakeSlackInteractions(
      {
        teamId: this.teamId,
        signingSecret: this.signingSecret,
        eventsUrl: () => this.eventsUrl,
        users: this.users,
        channels: this.channels,
        posted: this.posted,
        socket: (type, payload) =>
          this.socket === undefined
            ? undefined
            : this.pushEnvelope(payload, '', {}, type).then((delivery) => delivery.status),
      },
      options.ackDeadlineMs === undefined ? {} : { ackDeadlineMs: options.ackDeadlineMs },
    );
    this.streams = new FakeSlackStreams(this.state, options);
    this.server = createServer((req, res) => void this.handleHttp(req, res));
    this.server.on('upgrade', (req, socket, head) => {
      if (!req.url?.startsWith('/socket')) return socket.destroy();
      this.wss.handleUpgrade(req, socket, head, (ws) => this.acceptSocket(ws));
    });
  }

  /** Starts a fake on 127.0.0.1 at a free port. */
  static async start(options: FakeSlackOptions = {}): Promise<FakeSlack> {
    const fake = new FakeSlack(options);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** `http://127.0.0.1:<port>` */
  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Posts stored whose answer is still held back (`answerDelayMs`). */
  get answersHeld(): number {
    return this.answerDelay.held;
  }

  /** The Web API base for `clientOptions.slackApiUrl` (with the trailing `/api/`). */
  get slackApiUrl(): string {
    return `${this.url}/api/`;
  }

  /** True while a Socket Mode client is connected. */
  get socketConnected(): boolean {
    return this.socket !== undefined;
  }

  addUser(id: string, user: string | FakeSlackUser): void {
    this.users.set(
      id,
      typeof user === 'string' ? { name: user.toLowerCase(), displayName: user } : user,
    );
  }

  /** A fresh, increasing Slack `ts`: the time in microseconds, as Slack's are. */
  nextTs(): string {
    this.clock = Math.max(Date.now() * 1000, this.clock + 1);
    return `${Math.floor(this.clock / 1e6)}.${String(this.clock % 1e6).padStart(6, '0')}`;
  }

  /** Makes the next call of `method` fail once (queue several calls to fail several times). */
  failNext(method: string, failure: FakeSlackFailure = {}): void {
    const queue = this.failures.get(method) ?? [];
    queue.push(failure);
    this.failures.set(method, queue);
  }

  /**
   * Holds the answer to the next call of `method` until `release()` is called: a lookup that
   * is slow, for as long as a test needs it to be.
   *
   * @example
   * ```ts
   * const lookup = slack.holdNext('users.info');
   * await slack.message({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'first' });
   * await lookup.arrived; // the bot is looking Alice up
   * await slack.message({ channel: 'C0GENERAL', user: 'U0BOB', text: 'second' });
   * lookup.release();
   * ```
   *
   * With `{ done: true }` the fake first does what the call asks (creates the message, starts
   * the stream), then holds the answer: a bot that dies meanwhile made the call without
   * learning its result.
   */
  holdNext(method: string, options: { done?: boolean } = {}): FakeSlackHeldCall {
    let arrive!: (call: FakeSlackCall) => void;
    let release!: () => void;
    const arrived = new Promise<FakeSlackCall>((resolve) => (arrive = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const queue = this.holds.get(method) ?? [];
    queue.push({ arrive, released, done: options.done === true });
    this.holds.set(method, queue);
    this.releases.add(release);
    return { arrived, release };
  }

  /** Resolves once a Socket Mode client has connected and been greeted. */
  waitForSocket(): Promise<void> {
    if (this.socket !== undefined) return Promise.resolve();
    return new Promise((resolve) => this.socketWaiters.push(resolve));
  }

  /**
   * Delivers one event (wrapped in an `event_callback` envelope) to the bot: over Socket Mode
   * when connected, else as a signed POST to `eventsUrl`.
   */
  async sendEvent(
    event: Record<string, unknown>,
    options: FakeSlackSendOptions = {},
  ): Promise<FakeSlackDelivery> {
    const eventId =
      options.eventId ?? `Ev${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}`;
    const enterpriseId = this.enterprise?.id ?? null;
    const orgWide = this.enterprise?.orgWideInstall === true;
    const envelope = {
      token: 'verification-token-unused',
      team_id: this.teamId,
      ...(enterpriseId !== null && {
        enterprise_id: enterpriseId,
        context_team_id: this.teamId,
        context_enterprise_id: enterpriseId,
      }),
      api_app_id: 'A0FAKE',
      event,
      type: 'event_callback',
      event_id: eventId,
      event_time: Math.floor(Number(event.event_ts ?? event.ts ?? this.nextTs())),
      authorizations: [
        {
          enterprise_id: enterpriseId,
          team_id: orgWide ? null : this.teamId,
          user_id: this.bot.userId,
          is_bot: true,
          is_enterprise_install: orgWide,
        },
      ],
      is_ext_shared_channel: false,
    };
    const useSocket =
      options.via === 'socket' || (options.via !== 'http' && this.socket !== undefined);
    const delivery = useSocket
      ? this.pushEnvelope(envelope, eventId, options)
      : this.postEvent(envelope, eventId, options);
    return this.track(
      delivery.then((done) => {
        this.deliveries.push(done);
        if (done.status >= 200 && done.status < 300) this.acknowledged.push({ eventId, event });
        return done;
      }),
    );
  }

  /**
   * People keep writing: `message(i)` is posted `perSecond` times a second until `stop()`, as a
   * `message` event, or with `mention: true` as the `message` and `app_mention` pair. Sends are
   * not awaited, so a bot that is down does not slow the traffic; with `retries` each event is
   * delivered again until the bot answers 2xx or Slack gives up.
   *
   * @example
   * ```ts
   * const traffic = slack.traffic(10, (i) => ({ channel: 'C0GENERAL', user: 'U0ALICE', text: `#${i}` }));
   * await traffic.stop();
   * ```
   */
  traffic(
    perSecond: number,
    message: (index: number) => FakeSlackMessageInput & { mention?: boolean },
  ): SteadyTraffic {
    return steadyTraffic(perSecond, (index) => {
      const { mention, ...input } = message(index);
      return mention === true ? this.mention(input) : this.message(input);
    });
  }

  /** Sends a `message` event as a person (or bot) writes it; returns the delivery and the event. */
  async message(input: FakeSlackMessageInput, options: FakeSlackSendOptions = {}) {
    const event = this.messageEvent(input);
    this.keep(event);
    return { event, delivery: await this.sendEvent(event, options) };
  }

  /**
   * A person shares files: the `file_share` message Slack sends, its `files` served at their
   * `url_private` (to the bot token) by the fake.
   */
  async fileShare(
    input: FakeSlackMessageInput & { files: FakeSlackFile[] },
    options: FakeSlackSendOptions = {},
  ) {
    const { files, ...message } = input;
    const shared = this.files.share(files, message.user);
    return this.message(
      { ...message, subtype: 'file_share', upload: false, files: shared },
      options,
    );
  }

  /**
   * A person adds (or, with `removed`, takes back) a reaction on a message: the
   * `reaction_added` / `reaction_removed` event Slack sends.
   */
  react(
    input: { channel: string; user: string; ts: string; reaction: string; removed?: boolean },
    options: FakeSlackSendOptions = {},
  ) {
    const eventTs = this.nextTs();
    return this.sendEvent(
      {
        type: input.removed === true ? 'reaction_removed' : 'reaction_added',
        user: input.user,
        reaction: input.reaction,
        item: { type: 'message', channel: input.channel, ts: input.ts },
        event_ts: eventTs,
      },
      options,
    );
  }

  /**
   * A person mentions the bot: sends the `message` event and the `app_mention` event Slack
   * sends for the same post (same `ts`, different event ids). `<@bot>` is prefixed to the text
   * unless it already mentions the bot.
   */
  async mention(input: FakeSlackMessageInput) {
    const tag = `<@${this.bot.userId}>`;
    const text = input.text.includes(tag) ? input.text : `${tag} ${input.text}`;
    const event = this.messageEvent({ ...input, text });
    this.keep(event);
    const mention: Record<string, unknown> = { ...event, type: 'app_mention' };
    delete mention.channel_type;
    const deliveries = [await this.sendEvent(event), await this.sendEvent(mention)];
    return { event, deliveries };
  }

  /**
   * A person edits a message: sends the `message_changed` event Slack sends (hidden, with the
   * edited `message` and the `previous_message`).
   *
   * @example
   * ```ts
   * const { event } = await slack.message({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'teh' });
   * await slack.editMessage({ channel: 'C0GENERAL', user: 'U0ALICE', ts: event.ts as string, text: 'the' });
   * ```
   */
  editMessage(input: FakeSlackEditInput, options: FakeSlackSendOptions = {}) {
    const { channel, user, ts, text, previousText = '', thread_ts } = input;
    const thread = thread_ts === undefined ? {} : { thread_ts };
    return this.sendEvent(
      {
        ...this.hiddenEvent('message_changed', channel),
        message: {
          type: 'message',
          user,
          text,
          ts,
          ...thread,
          edited: { user, ts: this.nextTs() },
        },
        previous_message: { type: 'message', user, text: previousText, ts, ...thread },
      },
      options,
    );
  }

  /** A message is deleted: sends the `message_deleted` event Slack sends (hidden, with `deleted_ts`). */
  deleteMessage(input: FakeSlackDeleteInput, options: FakeSlackSendOptions = {}) {
    const { channel, ts, user } = input;
    return this.sendEvent(
      {
        ...this.hiddenEvent('message_deleted', channel),
        deleted_ts: ts,
        ...(user !== undefined && { previous_message: { type: 'message', user, ts } }),
      },
      options,
    );
  }

  /** Resolves with `posted` once it holds `count` messages, or one matching `predicate`. */
  waitForPosted(
    countOrPredicate: number | ((post: FakeSlackPost) => boolean),
    timeoutMs = 15_000,
  ): Promise<FakeSlackPost[]> {
    const done = () =>
      typeof countOrPredicate === 'number'
        ? this.posted.length >= countOrPredicate
        : this.posted.some(countOrPredicate);
    if (done()) return Promise.resolve(this.posted);
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(this.posted);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(
          new Error(
            `FakeSlack: waited ${timeoutMs} ms for posts; have ${JSON.stringify(this.posted.map((p) => p.text))}`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  /**
   * Resolves once `check` holds, looked at after each Web API call is answered (a thread status
   * set, a reaction added…); rejects after `timeoutMs` (default 15,000: a busy machine may take seconds to answer).
   *
   * @example
   * ```ts
   * await slack.waitFor(() => slack.reactions.length > 0);
   * ```
   */
  waitFor(check: () => boolean, timeoutMs = 15_000): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = () => {
        if (!check()) return;
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`FakeSlack: waited ${timeoutMs} ms for a condition`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** Resolves when every delivery in flight (including echoes of the bot's posts) has settled. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Closes the Socket Mode connection and the server (after in-flight deliveries settle). */
  async close(): Promise<void> {
    for (const release of this.releases) release();
    // Close Socket Mode connections with a handshake (a bare terminate reads as a network error);
    // envelopes still unacknowledged settle then.
    await Promise.all([...this.wss.clients].map((client) => closeSocket(client)));
    await this.idle();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private messageEvent(input: FakeSlackMessageInput): Record<string, unknown> {
    const ts = input.ts ?? this.nextTs();
    const channelType = input.channel_type ?? (input.channel.startsWith('D') ? 'im' : 'channel');
    return {
      type: 'message',
      team: this.teamId,
      ...input,
      ts,
      event_ts: ts,
      channel_type: channelType,
    };
  }

  /** Keeps a message a person wrote, for conversation reads. */
  private keep(event: Record<string, unknown>): void {
    const { channel, user, text, ts, thread_ts } = event;
    this.written.push({
      channel: String(channel),
      user: String(user),
      text: String(text),
      ts: String(ts),
      ...(typeof thread_ts === 'string' && { thread_ts }),
    });
  }

  /** The fields every hidden `message` event (an edit, a deletion) of `channel` carries. */
  private hiddenEvent(subtype: string, channel: string): Record<string, unknown> {
    const ts = this.nextTs();
    return {
      type: 'message',
      subtype,
      hidden: true,
      channel,
      channel_type: channel.startsWith('D') ? 'im' : 'channel',
      ts,
      event_ts: ts,
    };
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.pending.add(promise);
    void promise.finally(() => this.pending.delete(promise)).catch(() => undefined);
    return promise;
  }

  private async postEvent(
    envelope: object,
    eventId: string,
    options: FakeSlackSendOptions,
  ): Promise<FakeSlackDelivery> {
    if (this.eventsUrl === undefined)
      throw new Error("FakeSlack: set eventsUrl (the bot's /slack/events URL) first");
    const retry = this.retry;
    if (retry === undefined) return this.postOnce(envelope, eventId, options);
    let attempt: FakeSlackSendOptions = options;
    for (let retries = 0; ; retries++) {
      const delivery = await this.postOnce(envelope, eventId, attempt, retry.timeoutMs).catch(
        (error: unknown) => ({
          eventId,
          status: 0,
          body: String(error),
          reason: isTimeout(error) ? 'http_timeout' : 'connection_failed',
        }),
      );
      const { reason = 'http_error', ...done } = delivery as FakeSlackDelivery & {
        reason?: string;
      };
      if (attempt.retryNum !== undefined) done.retryNum = attempt.retryNum;
      const delay = retry.delaysMs[retries];
      if ((done.status >= 200 && done.status < 300) || delay === undefined) return done;
      this.deliveries.push(done);
      await new Promise((resolve) => setTimeout(resolve, delay));
      attempt = {
        ...options,
        retryNum: (options.retryNum ?? 0) + retries + 1,
        retryReason: reason,
      };
    }
  }

  /** One signed POST of an envelope to `eventsUrl`. */
  private async postOnce(
    envelope: object,
    eventId: string,
    options: FakeSlackSendOptions,
    timeoutMs?: number,
  ): Promise<FakeSlackDelivery> {
    if (this.eventsUrl === undefined)
      throw new Error("FakeSlack: set eventsUrl (the bot's /slack/events URL) first");
    const body = JSON.stringify(envelope);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': signSlackRequest(
        options.signingSecret ?? this.signingSecret,
        timestamp,
        body,
      ),
    };
    if (options.retryNum !== undefined) {
      headers['x-slack-retry-num'] = String(options.retryNum);
      headers['x-slack-retry-reason'] = options.retryReason ?? 'http_timeout';
    }
    const signal = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
    const response = await fetch(this.eventsUrl, { method: 'POST', headers, body, signal });
    return { eventId, status: response.status, body: await response.text() };
  }

  private pushEnvelope(
    envelope: object,
    eventId: string,
    options: FakeSlackSendOptions,
    type = 'events_api',
  ): Promise<FakeSlackDelivery> {
    const socket = this.socket;
    if (socket === undefined)
      return Promise.reject(new Error('FakeSlack: no Socket Mode connection'));
    const envelopeId = randomUUID();
    const acked = new Promise<FakeSlackDelivery>((resolve) => {
      this.ackWaiters.set(envelopeId, (status) =>
        resolve({ eventId, status, body: status === 200 ? '' : 'not acknowledged', envelopeId }),
      );
    });
    socket.send(
      JSON.stringify({
        envelope_id: envelopeId,
        type,
        accepts_response_payload: type !== 'events_api',
        retry_attempt: options.retryNum ?? 0,
        retry_reason: options.retryNum === undefined ? '' : (options.retryReason ?? 'timeout'),
        payload: envelope,
      }),
    );
    return acked;
  }

  private acceptSocket(ws: WebSocket): void {
    this.socket = ws;
    ws.on('message', (data) => {
      let frame: unknown;
      try {
        frame = JSON.parse(String(data));
      } catch {
        return;
      }
      const envelopeId = (frame as { envelope_id?: unknown }).envelope_id;
      if (typeof envelopeId !== 'string') return;
      this.acks.push(envelopeId);
      this.ackWaiters.get(envelopeId)?.(200);
      this.ackWaiters.delete(envelopeId);
    });
    ws.on('close', () => {
      if (this.socket !== ws) return;
      this.socket = undefined;
      // Never acknowledged on this connection: Slack would send these again (retry_attempt).
      for (const settle of this.ackWaiters.values()) settle(0);
      this.ackWaiters.clear();
    });
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: 1,
        debug_info: { host: 'fake-slack', approximate_connection_time: 18060 },
        connection_info: { app_id: 'A0FAKE' },
      }),
    );
    for (const resolve of this.socketWaiters.splice(0)) resolve();
  }

  private async handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.files.serve(req, res, this.token)) return;
    if (await this.files.receive(req, res)) return;
    const match = /^\/api\/([\w.]+)/.exec(req.url ?? '');
    if (req.method !== 'POST' || match === null) {
      res.writeHead(404).end();
      return;
    }
    const method = match[1] as string;
    let params: Record<string, unknown>;
    try {
      params = parseBody(req.headers['content-type'], await readBody(req));
    } catch {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"ok":false,"error":"invalid_json"}');
      return;
    }
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const token = bearer ?? (typeof params.token === 'string' ? params.token : undefined);
    const call = { method, token, params, at: Date.now() };
    this.calls.push(call);
    const hold = this.holds.get(method)?.shift();
    if (hold !== undefined && !hold.done) {
      hold.arrive(call);
      await hold.released;
    }

    const reply = (status: number, body: object, headers: Record<string, string> = {}) => {
      if (res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
      res.end(JSON.stringify(body));
    };
    const failure = this.failures.get(method)?.shift();
    if (failure !== undefined) {
      const status = failure.status ?? 200;
      const headers: Record<string, string> =
        failure.retryAfter === undefined ? {} : { 'retry-after': String(failure.retryAfter) };
      const error = failure.error ?? (status === 429 ? 'ratelimited' : 'internal_error');
      return reply(status, { ok: false, error }, headers);
    }
    const expected = method === 'apps.connections.open' ? this.appToken : this.token;
    if (token !== expected)
      return reply(200, { ok: false, error: token === undefined ? 'not_authed' : 'invalid_auth' });
    const retryAfter = this.streams.retryAfter(method);
    if (retryAfter !== undefined) {
      return reply(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(retryAfter) });
    }
    const before = method === 'chat.update' ? this.postAt(params)?.text : undefined;
    const result =
      this.streams.answer(method, params) ??
      this.files.answer(method, params) ??
      answerWebApi(this.state, method, params);
    const creates = method === 'chat.postMessage' || method === 'chat.startStream';
    const held = creates && result.ok === true && this.answerDelay.wait();
    if (held) await held;
    if (hold?.done === true) {
      hold.arrive(call);
      await hold.released;
    }
    reply(200, result);
    for (const check of [...this.waiters]) check();
    if (result.ok !== true || !this.echoBotMessages) return;
    if (method === 'chat.postMessage') {
      const message = result.message as Record<string, unknown>;
      this.echo({
        ...message,
        channel: result.channel,
        event_ts: message.ts,
        channel_type: 'channel',
      });
    } else if (method === 'chat.update') {
      this.echo(this.ownEdit(String(result.channel), String(result.ts), before ?? ''));
    }
  }

  /** Delivers what the bot did back to it, as Slack does (`echoBotMessages`). */
  private echo(event: Record<string, unknown>): void {
    void this.track(this.sendEvent(event)).catch(() => undefined);
  }

  /** The `message_changed` Slack sends for the bot's `chat.update` of its message at `ts`. */
  private ownEdit(channel: string, ts: string, previousText: string): Record<string, unknown> {
    const post = this.postAt({ channel, ts });
    const thread = post?.thread_ts === undefined ? {} : { thread_ts: post.thread_ts };
    const { userId: user, botId: bot_id } = this.bot;
    const message = { type: 'message', user, bot_id, ts, ...thread };
    return {
      ...this.hiddenEvent('message_changed', channel),
      message: { ...message, text: post?.text ?? '', edited: { user, ts: this.nextTs() } },
      previous_message: { ...message, text: previousText },
    };
  }

  private postAt(params: Record<string, unknown>): FakeSlackPost | undefined {
    return this.posted.find((post) => post.channel === params.channel && post.ts === params.ts);
  }
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

function closeSocket(client: WebSocket): Promise<void> {
  return new Promise((resolve) => {
    if (client.readyState === client.CLOSED) return resolve();
    const timer = setTimeout(() => client.terminate(), 1000);
    client.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    if (client.readyState === client.OPEN) client.close(1001, 'fake Slack closing');
  });
}
