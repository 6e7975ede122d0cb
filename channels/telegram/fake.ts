import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Chat, Message, MessageEntity, Update, User, UserFromGetMe } from 'grammy/types';
import { readMultipart, type FormPart } from '../testing/multipart.js';
import { steadyTraffic, type SteadyTraffic } from '../testing/traffic.js';
import { HtmlRefused, parseTelegramHtml } from './fake-html.js';
import { checkKeyboard, FakeTelegramInteractions } from './fake-interactions.js';
import {
  FakeTelegramFiles,
  uploadedMedia,
  type FakeFormFile,
  type FakeTelegramMedia,
  type FakeTelegramUpload,
} from './fake-files.js';
import { isAllowed, reactionUpdate, type FakeTelegramReaction } from './fake-reactions.js';
import type { EditLimit } from '../testing/edit-limit.js';
import {
  DEFAULT_TELEGRAM_DRAFT_LIMIT,
  DEFAULT_TELEGRAM_EDIT_LIMIT,
  FakeTelegramStreaming,
  NOT_MODIFIED,
  unchanged,
} from './fake-stream.js';
import type { FakeTelegramDraft } from './fake-stream.js';

export type { FakeTelegramDraft } from './fake-stream.js';
export type { FakeTelegramMedia, FakeTelegramMediaKind, FakeTelegramUpload } from './fake-files.js';
export type { FakeTelegramReaction } from './fake-reactions.js';

/** A failure `failNext` makes the fake answer with instead of the real result. */
export type FakeTelegramFailure =
  | { error_code: number; description?: string; retry_after?: number }
  /** Drop the connection without an answer (a network failure). */
  | { network: true };

/**
 * An update to deliver; `update_id` is assigned when missing. Loosely typed on purpose, so
 * tests can also push malformed updates.
 */
export type FakeUpdateInput = Update | ({ update_id?: number } & Record<string, unknown>);

/** One Bot API call the fake received. */
export interface FakeTelegramCall {
  method: string;
  payload: Record<string, unknown>;
  /** When the fake received the call, in ms since the epoch. */
  at: number;
}

/** A message the bot posted with `sendMessage` (or changed with `editMessageText`). */
export interface FakeTelegramSent {
  method: 'sendMessage' | 'editMessageText';
  chatId: number;
  text: string;
  payload: Record<string, unknown>;
  /** The Message object the fake answered with. */
  message: Message;
}

/** What `sendUserMessage` needs; ids and the date are filled in. */
export interface FakeUserMessage {
  chat: Chat;
  from: User;
  text: string;
  /** Defaults to a `mention` entity for every `@username` in `text` (UTF-16 offsets). */
  entities?: MessageEntity[];
  reply_to_message?: Message;
  /** A forum topic (sets `is_topic_message` in forum supergroups). */
  message_thread_id?: number;
  /** Send as `edited_message` of this message id instead of a new message. */
  editOf?: number;
  /** A file sent with the message; `text` is then its caption (empty: none). */
  file?: FakeTelegramMedia;
}

/** Options of {@link FakeTelegram}. */
export interface FakeTelegramOptions {
  token?: string;
  /** The bot `getMe` returns. */
  bot?: { id?: number; username?: string; first_name?: string };
  /**
   * Once a webhook is set (`setWebhook`), POST queued updates to it as Telegram does — up to
   * `max_connections` (default 40) at a time, with the secret token — and deliver again, after
   * `retryMs` (default 200), every update not answered 2xx within `timeoutMs` (default 10 000).
   * Off by default: tests then post with `postWebhook` themselves.
   */
  webhookDelivery?: boolean | { retryMs?: number; timeoutMs?: number };
  /** How long a button press may wait for `answerCallbackQuery` (see `FakeTelegramInteractions`). */
  callbackDeadlineMs?: number;
  /**
   * How often the bot may edit messages of one chat before `editMessageText` answers 429 with
   * `parameters.retry_after` (default 5 within 3 s; `false`: no limit).
   */
  editLimit?: EditLimit;
  /** How often the bot may update drafts of one chat (default 10 a second; `false`: no limit). */
  draftLimit?: EditLimit;
}

interface PendingUpdate {
  update: Update;
  delivered: boolean;
  /** Webhook delivery: being posted now, or not before this time (ms since the epoch). */
  posting?: boolean;
  retryAt?: number;
}

interface Waiter {
  check(): boolean;
  cancel(): void;
  /** A long poll's: ends it with 409 when another `getUpdates` comes. */
  conflict?(): void;
}

/**
 * A Telegram Bot API server on 127.0.0.1 for tests: real HTTP, `POST /bot<token>/<method>`
 * with JSON or form bodies, `{ ok, result }` answers. It speaks `getMe`, `deleteWebhook`,
 * `setWebhook`, `getWebhookInfo`, long-polling `getUpdates` (held open until an update
 * arrives or `timeout`; `offset` confirms delivered updates), `sendMessage`,
 * `sendChatAction`, `editMessageText` (rate-limited per chat, refusing an edit that changes
 * nothing) and `sendMessageDraft` (private chats, with the person's stop button).
 *
 * @example
 * ```ts
 * import { FakeTelegram } from 'colloquy/testing';
 * import { TelegramChannel } from 'colloquy/telegram';
 *
 * const telegram = await FakeTelegram.start();
 * const channel = new TelegramChannel({ token: telegram.token, client: { apiRoot: telegram.apiRoot } });
 * // … start a Bot with the channel …
 * telegram.sendUserMessage({ chat: { id: 1001, type: 'private', first_name: 'Ada' },
 *   from: { id: 1001, is_bot: false, first_name: 'Ada' }, text: 'hello' });
 * const [reply] = await telegram.waitForSent(1);
 * await telegram.close();
 * ```
 */
export class FakeTelegram {
  readonly token: string;
  /** The bot's `getMe` answer; pass it as `botInfo` to skip a call. */
  readonly botInfo: UserFromGetMe;
  /** Every call, in order. */
  readonly calls: FakeTelegramCall[] = [];
  /**
   * Called with each call as it arrives, before the fake answers it: what the bot had done
   * before making the call can be looked at then.
   */
  onCall: ((call: FakeTelegramCall) => void) | undefined;
  /** What the bot sent, in order. */
  readonly sent: FakeTelegramSent[] = [];
  /**
   * Updates Telegram counts as delivered, in the order it learnt so: by long polling, those a
   * later `getUpdates` `offset` covered; by webhook, those the bot answered with a 2xx. Telegram
   * never sends these again.
   */
  readonly acknowledged: Update[] = [];
  /**
   * Long polls ended by a newer `getUpdates` (Telegram answers the older one 409 Conflict:
   * two instances polling one token).
   */
  conflicts = 0;
  /** Commands registered and button presses (`pressButton`) with their answers. */
  readonly interactions: FakeTelegramInteractions;
  /** The update types the bot last asked for (`allowed_updates`); undefined: Telegram's default. */
  allowedUpdates: string[] | undefined;
  /** The files people sent, served by `getFile` and the file download URL. */
  readonly files = new FakeTelegramFiles();
  /** The files the bot uploaded (`sendPhoto`, `sendDocument`), in order. */
  readonly uploads: FakeTelegramUpload[] = [];
  /** The reactions the bot set (`setMessageReaction`), in order: what it leaves on the message. */
  readonly botReactions: { chatId: number; messageId: number; emoji: string[] }[] = [];
  /** The webhook set with `setWebhook`, if any. */
  webhook: { url: string; secret_token?: string; max_connections?: number } | undefined;

  private readonly server: Server;
  private readonly pending: PendingUpdate[] = [];
  private readonly waiters = new Set<Waiter>();
  private readonly failures = new Map<string, FakeTelegramFailure[]>();
  private readonly messages = new Map<string, Message>();
  private readonly lastMessageId = new Map<number, number>();
  private nextUpdateId = 1;
  private clock = 1_763_700_000; // unix seconds, moves one second per message
  private readonly delivery: { retryMs: number; timeoutMs: number } | undefined;
  private readonly aborts = new AbortController();
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly streaming: FakeTelegramStreaming;

  constructor(options: FakeTelegramOptions = {}) {
    this.token = options.token ?? '123456789:AAFakeTelegramTokenForColloquyTests';
    this.botInfo = {
      id: options.bot?.id ?? 123456789,
      is_bot: true,
      first_name: options.bot?.first_name ?? 'Colloquy Test Bot',
      username: options.bot?.username ?? 'colloquy_test_bot',
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
      can_connect_to_business: false,
      has_main_web_app: false,
      has_topics_enabled: false,
      allows_users_to_create_topics: false,
      can_manage_bots: false,
      supports_join_request_queries: false,
    };
    const delivery = options.webhookDelivery;
    if (delivery !== undefined && delivery !== false) {
      const { retryMs = 200, timeoutMs = 10_000 } = delivery === true ? {} : delivery;
      this.delivery = { retryMs, timeoutMs };
    }
    this.interactions = new FakeTelegramInteractions(
      options.callbackDeadlineMs === undefined
        ? {}
        : { callbackDeadlineMs: options.callbackDeadlineMs },
    );
    this.streaming = new FakeTelegramStreaming(
      options.editLimit ?? DEFAULT_TELEGRAM_EDIT_LIMIT,
      options.draftLimit ?? DEFAULT_TELEGRAM_DRAFT_LIMIT,
    );
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  /** The drafts the bot showed (`sendMessageDraft`), as people see them last, in order. */
  get drafts(): FakeTelegramDraft[] {
    return [...this.streaming.drafts.values()];
  }

  /**
   * The person presses stop on a draft shown with `can_stop`: Telegram sends the bot a
   * `stopped_message_generation` update. False when the draft had no stop button.
   *
   * @example
   * ```ts
   * const [draft] = telegram.drafts;
   * telegram.stopGeneration(adaDm, draft.draftId);
   * ```
   */
  stopGeneration(chat: Chat, draftId: number): boolean {
    const update = this.streaming.stop(chat, draftId);
    if (update !== undefined) this.pushUpdate(update);
    return update !== undefined;
  }

  /**
   * A person presses a button under a message the bot sent (`data`: the button's
   * `callback_data`): queues the `callback_query` update Telegram sends.
   *
   * @example
   * ```ts
   * const [sent] = await telegram.waitForSent(1);
   * telegram.pressButton(sent.message, ada, 'b:approve');
   * ```
   */
  pressButton(message: Message, from: User, data: string): Update {
    const current = this.messages.get(`${message.chat.id}:${message.message_id}`) ?? message;
    return this.pushUpdate({ callback_query: this.interactions.press(current, from, data) });
  }

  /**
   * Creates a fake and listens on 127.0.0.1 on a free port.
   *
   * @example
   * ```ts
   * const telegram = await FakeTelegram.start({ bot: { username: 'orders_bot' } });
   * ```
   */
  static async start(options?: FakeTelegramOptions): Promise<FakeTelegram> {
    const fake = new FakeTelegram(options);
    await fake.listen();
    return fake;
  }

  /** Starts listening (done by `FakeTelegram.start`). */
  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  /** Give this to grammy as `client: { apiRoot }`. */
  get apiRoot(): string {
    const address = this.server.address() as AddressInfo | null;
    if (address === null) throw new Error('FakeTelegram is not listening: await listen() first');
    return `http://127.0.0.1:${address.port}`;
  }

  /** The bot as it appears in `from` of its messages. */
  get botUser(): User {
    const { id, first_name, username } = this.botInfo;
    return { id, is_bot: true, first_name, username };
  }

  /**
   * Queues an update for `getUpdates` (an `update_id` is assigned when missing). Pushing an
   * update that was already delivered delivers it again, as Telegram does after a restart.
   *
   * @example
   * ```ts
   * telegram.pushUpdate({ update_id: 7, message });
   * ```
   */
  pushUpdate(update: FakeUpdateInput): Update {
    const full = {
      ...update,
      update_id: update.update_id ?? this.nextUpdateId,
    } as unknown as Update;
    this.nextUpdateId = Math.max(this.nextUpdateId, full.update_id + 1);
    this.pending.push({ update: full, delivered: false });
    this.wake();
    return full;
  }

  /**
   * A person changes their reactions on a message: queues the `message_reaction` update, which
   * Telegram sends only to a bot that asked for it (`allowed_updates`); answers whether it did.
   */
  react(reaction: FakeTelegramReaction): boolean {
    const update = reactionUpdate(reaction, this.tick());
    if (!isAllowed(update, this.allowedUpdates)) return false;
    this.pushUpdate(update);
    return true;
  }

  /** Keeps the `allowed_updates` a call gave (Telegram keeps the last one given). */
  private asked(allowed: unknown): void {
    const list = typeof allowed === 'string' ? (JSON.parse(allowed) as unknown) : allowed;
    if (Array.isArray(list)) this.allowedUpdates = list.map(String);
  }

  /**
   * A person writes in a chat: builds the Message Telegram would deliver and queues it.
   *
   * @example
   * ```ts
   * const { message } = telegram.sendUserMessage({ chat: group, from: ada, text: '@colloquy_test_bot hi' });
   * ```
   */
  sendUserMessage(input: FakeUserMessage): { update: Update; message: Message } {
    const message = this.buildMessage(input);
    const update =
      input.editOf === undefined
        ? this.pushUpdate({ message })
        : this.pushUpdate({ edited_message: message });
    return { update, message };
  }

  /**
   * People keep writing: `message(i)` is sent with `sendUserMessage` `perSecond` times a second
   * until `stop()`, whether or not the bot is up (Telegram keeps what it cannot deliver yet).
   *
   * @example
   * ```ts
   * const traffic = telegram.traffic(20, (i) => ({ chat, from: ada, text: `order #${i}` }));
   * // … kill and restart the bot …
   * await traffic.stop();
   * ```
   */
  traffic(perSecond: number, message: (index: number) => FakeUserMessage): SteadyTraffic {
    return steadyTraffic(perSecond, (index) => void this.sendUserMessage(message(index)));
  }

  /** Makes the next `times` calls of `method` fail (a 429 with `retry_after`, a 403, a dropped connection…). */
  failNext(method: string, failure: FakeTelegramFailure, times = 1): void {
    const queue = this.failures.get(method) ?? [];
    for (let i = 0; i < times; i++) queue.push(failure);
    this.failures.set(method, queue);
  }

  /**
   * Resolves with `sent` once at least `count` messages were sent, or once one matches
   * `predicate`; rejects after `timeoutMs` (default 15,000: a busy machine may take seconds to answer) with what was sent so far.
   *
   * @example
   * ```ts
   * const [first, second] = await telegram.waitForSent(2);
   * await telegram.waitForSent((sent) => sent.text.includes('refund'));
   * ```
   */
  waitForSent(
    countOrPredicate: number | ((sent: FakeTelegramSent) => boolean),
    timeoutMs = 15_000,
  ): Promise<FakeTelegramSent[]> {
    const check =
      typeof countOrPredicate === 'number'
        ? () => this.sent.length >= countOrPredicate
        : () => this.sent.some(countOrPredicate);
    return new Promise((resolve, reject) => {
      if (check()) return resolve(this.sent);
      const waiter: Waiter = {
        check: () => {
          if (!check()) return false;
          clearTimeout(timer);
          resolve(this.sent);
          return true;
        },
        cancel: () => {
          clearTimeout(timer);
          resolve(this.sent);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        const texts = this.sent.map((sent) => sent.text.slice(0, 60));
        reject(
          new Error(`FakeTelegram: waitForSent timed out; sent so far: ${JSON.stringify(texts)}`),
        );
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /**
   * Resolves with the calls of `method` once there are at least `count` (default 1); rejects
   * after `timeoutMs` (default 15,000: a busy machine may take seconds to answer).
   *
   * @example
   * ```ts
   * const [typing] = await telegram.waitForCall('sendChatAction');
   * ```
   */
  waitForCall(method: string, count = 1, timeoutMs = 15_000): Promise<FakeTelegramCall[]> {
    const of = () => this.calls.filter((call) => call.method === method);
    return new Promise((resolve, reject) => {
      if (of().length >= count) return resolve(of());
      const waiter: Waiter = {
        check: () => {
          if (of().length < count) return false;
          clearTimeout(timer);
          resolve(of());
          return true;
        },
        cancel: () => {
          clearTimeout(timer);
          resolve(of());
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`FakeTelegram: waitForCall(${method}) timed out`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /**
   * POSTs an update to a webhook the way Telegram does (JSON, secret header when given).
   *
   * @example
   * ```ts
   * const { status } = await telegram.postWebhook('http://127.0.0.1:8443/telegram', update, 's3cret');
   * ```
   */
  async postWebhook(
    url: string,
    update: FakeUpdateInput,
    secretToken?: string,
  ): Promise<{ status: number; body: string }> {
    const full = {
      ...update,
      update_id: (update.update_id as number | undefined) ?? this.nextUpdateId++,
    };
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (secretToken !== undefined) headers['x-telegram-bot-api-secret-token'] = secretToken;
    const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(full) });
    return { status: response.status, body: await response.text() };
  }

  /** A Message as a person would write it, without queueing it (for `postWebhook`). */
  buildMessage(input: FakeUserMessage): Message {
    const text = input.text;
    const forum = input.chat.type === 'supergroup' && input.chat.is_forum === true;
    const message = {
      message_id: input.editOf ?? this.nextMessageId(input.chat.id),
      date: this.tick(),
      chat: input.chat,
      from: input.from,
      text,
      entities: input.entities ?? mentionEntities(text),
      ...(input.message_thread_id !== undefined && { message_thread_id: input.message_thread_id }),
      ...(forum && input.message_thread_id !== undefined && { is_topic_message: true }),
      ...(input.reply_to_message !== undefined && { reply_to_message: input.reply_to_message }),
      ...(input.editOf !== undefined && { edit_date: this.tick() }),
    } as Message;
    if (message.entities?.length === 0) delete message.entities;
    if (input.file !== undefined) withFile(message, input.file, this.files);
    if (input.editOf === undefined)
      this.messages.set(`${input.chat.id}:${message.message_id}`, message);
    return message;
  }

  /** Stops the server; pending long polls answer with no updates. */
  async close(): Promise<void> {
    this.aborts.abort();
    clearTimeout(this.retryTimer);
    for (const waiter of [...this.waiters]) waiter.cancel();
    this.waiters.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.files.serve(req, res, this.token)) return;
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(new URL(req.url ?? '/', 'http://x').pathname);
    if (match === null)
      return reply(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    const [, token, method = ''] = match;
    let payload: Record<string, unknown>;
    try {
      payload = await readPayload(req);
    } catch {
      return reply(res, 400, {
        ok: false,
        error_code: 400,
        description: 'Bad Request: invalid body',
      });
    }
    if (token !== this.token) {
      return reply(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
    }
    const call = { method, payload, at: Date.now() };
    this.calls.push(call);
    this.onCall?.(call);
    for (const waiter of [...this.waiters]) if (waiter.check()) this.waiters.delete(waiter);
    const failure = this.failures.get(method)?.shift();
    if (failure !== undefined) {
      if ('network' in failure) return void res.socket?.destroy();
      const { error_code, retry_after } = failure;
      const description =
        failure.description ??
        (error_code === 429 ? `Too Many Requests: retry after ${retry_after ?? 1}` : 'Error');
      return reply(res, error_code, {
        ok: false,
        error_code,
        description,
        ...(retry_after !== undefined && { parameters: { retry_after } }),
      });
    }
    if (method === 'getUpdates') return this.getUpdates(payload, res);
    try {
      reply(res, 200, { ok: true, result: this.call(method, payload) });
    } catch (error) {
      const { code, description, retryAfter } = error as ApiFailure;
      reply(res, code, {
        ok: false,
        error_code: code,
        description,
        ...(retryAfter !== undefined && { parameters: { retry_after: retryAfter } }),
      });
    }
  }

  private call(method: string, payload: Record<string, unknown>): unknown {
    switch (method) {
      case 'getMe':
        return this.botInfo;
      case 'deleteWebhook':
        this.webhook = undefined;
        if (payload.drop_pending_updates === true) this.pending.length = 0;
        return true;
      case 'setWebhook':
        this.asked(payload.allowed_updates);
        if (typeof payload.url !== 'string')
          throw fail(400, 'Bad Request: bad webhook: URL is missing');
        this.webhook = {
          url: payload.url,
          secret_token: payload.secret_token as string | undefined,
          max_connections: payload.max_connections as number | undefined,
        };
        queueMicrotask(() => this.pushToWebhook());
        return true;
      case 'getWebhookInfo':
        return {
          url: this.webhook?.url ?? '',
          has_custom_certificate: false,
          pending_update_count: this.pending.length,
        };
      case 'getFile':
        return this.files.getFile(payload);
      case 'sendChatAction':
        return this.sendChatAction(payload);
      case 'sendMessage':
        return this.sendMessage(payload);
      case 'sendPhoto':
      case 'sendDocument':
        return this.sendFile(method, payload);
      case 'setMessageReaction':
        return this.setMessageReaction(payload);
      case 'editMessageText':
        return this.editMessageText(payload);
      case 'setMyCommands':
        return this.interactions.setMyCommands(payload);
      case 'answerCallbackQuery':
        return this.interactions.answerCallbackQuery(payload);
      case 'editMessageReplyMarkup':
        return this.editMessageReplyMarkup(payload);
      case 'sendMessageDraft': {
        const shown = this.streaming.draft(
          this.chatOf(Number(payload.chat_id)),
          payload,
          shownText,
        );
        if (shown !== true) throw shown;
        this.wake();
        return true;
      }
      default:
        throw fail(404, 'Not Found: method not found');
    }
  }

  private getUpdates(payload: Record<string, unknown>, res: ServerResponse): void {
    this.asked(payload.allowed_updates);
    const offset = Number(payload.offset ?? 0);
    const limit = Number(payload.limit ?? 100);
    const timeout = Number(payload.timeout ?? 0);
    if (offset > 0) this.confirm(offset);
    // One poller per token: a newer request ends the one still waiting, as Telegram does. A
    // poll its client gave up on (its close not seen yet) is no conflict: it is looked at a
    // little later, once the close had time to arrive.
    for (const waiter of [...this.waiters]) {
      if (waiter.conflict === undefined) continue;
      this.waiters.delete(waiter);
      setTimeout(() => waiter.conflict?.(), 200).unref();
    }
    const answer = () => {
      const batch = this.pending.slice(0, limit);
      for (const entry of batch) entry.delivered = true;
      reply(res, 200, { ok: true, result: batch.map((entry) => entry.update) });
    };
    if (this.pending.length > 0 || timeout <= 0) return answer();
    const waiter: Waiter = {
      check: () => {
        if (this.pending.length === 0) return false;
        clearTimeout(timer);
        answer();
        return true;
      },
      cancel: () => {
        clearTimeout(timer);
        reply(res, 200, { ok: true, result: [] });
      },
      conflict: () => {
        clearTimeout(timer);
        if (res.destroyed || res.writableEnded) return;
        this.conflicts++;
        reply(res, 409, {
          ok: false,
          error_code: 409,
          description:
            'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
        });
      },
    };
    const timer = setTimeout(() => {
      this.waiters.delete(waiter);
      reply(res, 200, { ok: true, result: [] });
    }, timeout * 1000);
    res.once('close', () => {
      clearTimeout(timer);
      this.waiters.delete(waiter);
    });
    this.waiters.add(waiter);
  }

  /** `offset` confirms every delivered update with a lower id. */
  private confirm(offset: number): void {
    const confirmed = this.pending.filter(
      (entry) => entry.delivered && entry.update.update_id < offset,
    );
    for (const entry of confirmed) this.acknowledge(entry);
  }

  private acknowledge(entry: PendingUpdate): void {
    const index = this.pending.indexOf(entry);
    if (index < 0) return;
    this.pending.splice(index, 1);
    this.acknowledged.push(entry.update);
  }

  /** Webhook delivery: posts what waits, as many at a time as the webhook allows. */
  private pushToWebhook(): void {
    const webhook = this.webhook;
    if (this.delivery === undefined || webhook === undefined || this.aborts.signal.aborted) return;
    const now = Date.now();
    let posting = this.pending.filter((entry) => entry.posting === true).length;
    let nextRetry = Infinity;
    for (const entry of this.pending) {
      if (posting >= (webhook.max_connections ?? 40)) break;
      if (entry.posting === true) continue;
      if ((entry.retryAt ?? 0) > now) {
        nextRetry = Math.min(nextRetry, entry.retryAt as number);
        continue;
      }
      posting++;
      entry.posting = true;
      void this.postToWebhook(entry, webhook).then((ok) => {
        entry.posting = false;
        if (ok) this.acknowledge(entry);
        else entry.retryAt = Date.now() + (this.delivery?.retryMs ?? 0);
        this.pushToWebhook();
      });
    }
    if (nextRetry < Infinity) {
      clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => this.pushToWebhook(), nextRetry - now);
    }
  }

  /** One webhook POST; true when the bot answered 2xx. */
  private async postToWebhook(
    entry: PendingUpdate,
    webhook: NonNullable<FakeTelegram['webhook']>,
  ): Promise<boolean> {
    entry.delivered = true;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (webhook.secret_token !== undefined) {
      headers['x-telegram-bot-api-secret-token'] = webhook.secret_token;
    }
    const timeout = AbortSignal.timeout(this.delivery?.timeoutMs ?? 10_000);
    try {
      const response = await fetch(webhook.url, {
        method: 'POST',
        headers,
        body: JSON.stringify(entry.update),
        signal: AbortSignal.any([timeout, this.aborts.signal]),
      });
      await response.arrayBuffer();
      return response.ok;
    } catch {
      return false; // refused, reset or timed out: Telegram tries again later
    }
  }

  private sendMessage(payload: Record<string, unknown>): Message {
    const chatId = Number(payload.chat_id);
    if (!Number.isFinite(chatId)) throw fail(400, 'Bad Request: chat not found');
    checkKeyboard(payload.reply_markup);
    const { text, entities } = shownText(payload);
    const replyTo = (payload.reply_parameters as { message_id?: number } | undefined)?.message_id;
    const replied = replyTo === undefined ? undefined : this.messages.get(`${chatId}:${replyTo}`);
    const threadId = payload.message_thread_id as number | undefined;
    const chat = this.chatOf(chatId);
    const message = {
      message_id: this.nextMessageId(chatId),
      date: this.tick(),
      chat,
      from: this.botUser,
      text,
      ...(entities.length > 0 && { entities }),
      ...(threadId !== undefined && { message_thread_id: threadId }),
      ...(threadId !== undefined &&
        chat.type === 'supergroup' &&
        chat.is_forum === true && {
          is_topic_message: true,
        }),
      ...(replied !== undefined && { reply_to_message: replied }),
      ...(payload.reply_markup !== undefined && { reply_markup: payload.reply_markup }),
    } as Message;
    this.messages.set(`${chatId}:${message.message_id}`, message);
    this.record({ method: 'sendMessage', chatId, text, payload, message });
    return message;
  }

  /** `sendPhoto` / `sendDocument` with an uploaded file (multipart), and its caption. */
  private sendFile(
    method: 'sendPhoto' | 'sendDocument',
    payload: Record<string, unknown>,
  ): Message {
    const chatId = Number(payload.chat_id);
    if (!Number.isFinite(chatId)) throw fail(400, 'Bad Request: chat not found');
    const kind = method === 'sendPhoto' ? 'photo' : 'document';
    const upload = payload[kind] as FakeFormFile;
    const media = uploadedMedia(this.files, kind, upload);
    const caption = typeof payload.caption === 'string' ? payload.caption : undefined;
    const threadId = payload.message_thread_id as number | undefined;
    const message = {
      message_id: this.nextMessageId(chatId),
      date: this.tick(),
      chat: this.chatOf(chatId),
      from: this.botUser,
      ...media,
      ...(caption !== undefined && { caption }),
      ...(threadId !== undefined && { message_thread_id: Number(threadId) }),
    } as Message;
    this.messages.set(`${chatId}:${message.message_id}`, message);
    this.uploads.push({
      method,
      chatId,
      name: upload.name,
      bytes: upload.bytes,
      ...(caption !== undefined && { caption }),
      message,
    });
    this.wake();
    return message;
  }

  /** `setMessageReaction` on a message the chat has (emoji reactions only). */
  private setMessageReaction(payload: Record<string, unknown>): true {
    const chatId = Number(payload.chat_id);
    const messageId = Number(payload.message_id);
    if (!this.messages.has(`${chatId}:${messageId}`))
      throw fail(400, 'Bad Request: message to react not found');
    const reaction = (payload.reaction ?? []) as { type?: string; emoji?: string }[];
    if (!Array.isArray(reaction) || reaction.some((r) => r.type !== 'emoji'))
      throw fail(400, 'Bad Request: REACTION_INVALID');
    this.botReactions.push({ chatId, messageId, emoji: reaction.map((r) => String(r.emoji)) });
    this.wake();
    return true;
  }

  private sendChatAction(payload: Record<string, unknown>): true {
    if (!Number.isFinite(Number(payload.chat_id))) throw fail(400, 'Bad Request: chat not found');
    if (!CHAT_ACTIONS.has(String(payload.action))) {
      throw fail(400, 'Bad Request: wrong parameter action in request');
    }
    return true;
  }

  private editMessageText(payload: Record<string, unknown>): Message {
    const chatId = Number(payload.chat_id);
    const original = this.messages.get(`${chatId}:${Number(payload.message_id)}`);
    if (original === undefined) throw fail(400, 'Bad Request: message to edit not found');
    const { text, entities } = shownText(payload);
    if (unchanged(original, { text, entities })) throw fail(400, NOT_MODIFIED);
    const limited = this.streaming.editRefusal(chatId);
    if (limited !== undefined) throw limited;
    const { entities: _before, ...rest } = original;
    const message = {
      ...rest,
      text,
      ...(entities.length > 0 && { entities }),
      edit_date: this.tick(),
    } as Message;
    this.messages.set(`${chatId}:${message.message_id}`, message);
    this.record({ method: 'editMessageText', chatId, text, payload, message });
    return message;
  }

  /** Replaces (or, empty, takes away) a message's inline keyboard. */
  private editMessageReplyMarkup(payload: Record<string, unknown>): Message {
    const key = `${Number(payload.chat_id)}:${Number(payload.message_id)}`;
    const original = this.messages.get(key);
    if (original === undefined) throw fail(400, 'Bad Request: message to edit not found');
    checkKeyboard(payload.reply_markup);
    const { reply_markup: _before, ...rest } = original;
    const markup = payload.reply_markup as { inline_keyboard?: unknown[] } | undefined;
    const message = {
      ...rest,
      ...(markup?.inline_keyboard?.length ? { reply_markup: markup } : {}),
      edit_date: this.tick(),
    } as Message;
    this.messages.set(key, message);
    return message;
  }

  /** The message as it stands now (edits and keyboard changes included). */
  messageNow(chatId: number, messageId: number): Message | undefined {
    return this.messages.get(`${chatId}:${messageId}`);
  }

  private record(sent: FakeTelegramSent): void {
    this.sent.push(sent);
    this.wake();
  }

  private wake(): void {
    this.pushToWebhook();
    for (const waiter of [...this.waiters]) if (waiter.check()) this.waiters.delete(waiter);
  }

  private chatOf(chatId: number): Chat {
    for (const message of this.messages.values())
      if (message.chat.id === chatId) return message.chat;
    return chatId > 0
      ? { id: chatId, type: 'private', first_name: `User ${chatId}` }
      : { id: chatId, type: 'group', title: `Group ${chatId}` };
  }

  private nextMessageId(chatId: number): number {
    const id = (this.lastMessageId.get(chatId) ?? 0) + 1;
    this.lastMessageId.set(chatId, id);
    return id;
  }

  private tick(): number {
    return this.clock++;
  }
}

/**
 * The text a `sendMessage` or `editMessageText` shows, and its entities: `parse_mode: 'HTML'`
 * read as Telegram reads it, else the text as sent with the `entities` given. Refused as
 * Telegram refuses it: empty, longer than 4096 characters once parsed, or markup it cannot read.
 */
function shownText(payload: Record<string, unknown>): { text: string; entities: MessageEntity[] } {
  const raw = payload.text;
  if (typeof raw !== 'string' || raw.trim().length === 0) {
    throw fail(400, 'Bad Request: message text is empty');
  }
  let shown: { text: string; entities: MessageEntity[] };
  if (payload.parse_mode === undefined) {
    shown = { text: raw, entities: (payload.entities as MessageEntity[] | undefined) ?? [] };
  } else if (payload.parse_mode === 'HTML') {
    try {
      shown = parseTelegramHtml(raw);
    } catch (error) {
      if (error instanceof HtmlRefused) throw fail(error.code, error.description);
      throw error;
    }
  } else {
    // Telegram also reads MarkdownV2; the fake reads only what colloquy sends.
    throw fail(
      400,
      `Bad Request: the fake reads parse_mode HTML only, not ${String(payload.parse_mode)}`,
    );
  }
  if (shown.text.trim().length === 0) throw fail(400, 'Bad Request: message text is empty');
  if (shown.text.length > 4096) throw fail(400, 'Bad Request: message is too long');
  return shown;
}

/** The message carries the file, and its text becomes the file's caption. */
function withFile(message: Message, file: FakeTelegramMedia, files: FakeTelegramFiles): void {
  const { text, entities } = message;
  delete (message as { text?: string }).text;
  delete message.entities;
  Object.assign(message, files.media(file));
  if (text !== undefined && text !== '') {
    Object.assign(message, { caption: text, ...(entities && { caption_entities: entities }) });
  }
}

interface ApiFailure {
  code: number;
  description: string;
  /** Seconds, for a 429 (`parameters.retry_after`). */
  retryAfter?: number;
}

function fail(code: number, description: string): ApiFailure {
  return { code, description };
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** `mention` entities for every `@username` in a text, with UTF-16 offsets like Telegram's. */
function mentionEntities(text: string): MessageEntity[] {
  return [...text.matchAll(/(?<![\w@])@[A-Za-z][A-Za-z0-9_]{3,31}/g)].map((match) => ({
    type: 'mention',
    offset: match.index,
    length: match[0].length,
  }));
}

/** Reads a JSON, urlencoded or multipart body; form values holding JSON are decoded. */
async function readPayload(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  if (raw.length === 0) return {};
  const type = req.headers['content-type'] ?? '';
  if (type.includes('application/json'))
    return JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
  const parts: FormPart[] = type.includes('multipart/form-data')
    ? readMultipart(raw, type)
    : [...new URLSearchParams(raw.toString('utf8'))].map(([name, value]) => ({
        name,
        bytes: Buffer.from(value),
      }));
  const payload: Record<string, unknown> = {};
  for (const part of parts) {
    if (part.filename !== undefined) continue;
    const value = part.bytes.toString('utf8');
    // grammY sends a file as `attach://<part name>`, the bytes in the part of that name.
    const attached = /^attach:\/\/(.+)$/.exec(value)?.[1];
    const file = parts.find((p) => p.filename !== undefined && p.name === attached);
    if (file !== undefined) {
      const upload: FakeFormFile = {
        name: file.filename ?? '',
        type: file.contentType ?? 'application/octet-stream',
        bytes: file.bytes,
      };
      payload[part.name] = upload;
      continue;
    }
    try {
      payload[part.name] = /^[[{]/.test(value) ? JSON.parse(value) : value;
    } catch {
      payload[part.name] = value;
    }
  }
  return payload;
}

/** The actions `sendChatAction` takes. */
const CHAT_ACTIONS = new Set([
  'typing',
  'upload_photo',
  'record_video',
  'upload_video',
  'record_voice',
  'upload_voice',
  'upload_document',
  'choose_sticker',
  'find_location',
  'record_video_note',
  'upload_video_note',
]);
