import type { PostPlace } from '../../src/posts.js';
import { timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Bot as GrammyBot } from 'grammy';
import type { ApiClientOptions } from 'grammy';
import type { CallbackQuery, ReactionTypeEmoji, Update, UserFromGetMe } from 'grammy/types';
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
} from '../../src/channel.js';
import type { BurstOption } from '../../src/bot/bursts.js';
import { ColloquyError, MalformedEventError } from '../../src/errors.js';
import { addSecret, consoleLogger, redactError } from '../../src/logger.js';
import { filesOnly, filesSent } from '../shared/files.js';
import { sendParts } from '../shared/platform.js';
import {
  chatIdValue,
  notModified,
  retryTransformer,
  telegramParts,
  toColloquyError,
} from './format.js';
import { sendTelegramFiles } from './files.js';
import { pollUpdates } from './polling.js';
import { telegramTyping } from './typing.js';
import { postTelegramPart, telegramStream } from './stream.js';
import { draftStream, TelegramDrafts } from './draft.js';
import { inlineKeyboard, pressTurn, setTelegramCommands, withKeyboard } from './interactions.js';
import { leaseNames } from '../../src/leases.js';
import type { RetryOptions } from './format.js';
import {
  BodyTooLargeError,
  DEFAULT_MAX_WEBHOOK_BODY_BYTES,
  readBoundedBody,
  refuseTooLarge,
} from './body.js';
import { displayName, parseUpdate, participantId, telegramPostPlace } from './parse.js';
import { TELEGRAM_ALLOWED_UPDATES, telegramReactions } from './reactions.js';
import type { TelegramSelf } from './parse.js';
import { TELEGRAM_API_ROOT, telegramDownload } from './download.js';
import type {
  AttachmentFetchOptions,
  FetchedAttachment,
  MessageAttachment,
} from '../../src/attachments.js';

/** Options for receiving updates by webhook. */
export interface TelegramWebhookOptions {
  /**
   * Telegram sends it in `X-Telegram-Bot-Api-Secret-Token`; requests without it get 401 and
   * are not processed. 1-256 characters of `A-Z a-z 0-9 _ -`.
   */
  secretToken: string;
  /** Path the built-in server answers on (default `/telegram`). */
  path?: string;
  /** Listen on this port (0: any free one) with a built-in server; omit to mount `webhookHandler` yourself. */
  port?: number;
  /** Host for the built-in server (default `0.0.0.0`). */
  host?: string;
  /** Public HTTPS URL to register with `setWebhook` on start; omit if you register it yourself. */
  url?: string;
  /**
   * Largest request body read, in bytes (default 4 MB): a longer one gets 413 and is not read
   * further, whatever its secret token.
   */
  maxBodyBytes?: number;
}

/** Options of {@link TelegramChannel}. */
export interface TelegramChannelOptions {
  /** The token from @BotFather. */
  token: string;
  /** `polling` (default) or `webhook` (needs `webhook`). */
  mode?: 'polling' | 'webhook';
  webhook?: TelegramWebhookOptions;
  /** Passed to grammy as is: `apiRoot` points the bot at a local Bot API server or a fake. */
  client?: ApiClientOptions;
  /** The bot's own `getMe` answer, to skip that call at start. */
  botInfo?: UserFromGetMe;
  /** Use this grammy bot instead of creating one; colloquy installs its middleware on it. */
  bot?: GrammyBot;
  /** How rate-limited (429), failed (5xx) and unreachable calls are retried. */
  retry?: RetryOptions;
  /** Long-polling timeout in seconds (default 30). */
  pollingTimeoutSeconds?: number;
  /**
   * Long polling fetches no more updates while this many events handed to the bot are still
   * being handled (default 300): they wait with Telegram, not in memory.
   */
  maxUnprocessed?: number;
  /**
   * Show a reply in a private chat as it is written with `sendMessageDraft` (default true),
   * with a button the person can stop it with; false: post it, then edit it, as in groups.
   */
  drafts?: boolean;
  /**
   * What a person's burst of turns gets on this channel (see `BurstMode`) unless the bot or
   * the agent says otherwise; default `queue`.
   */
  bursts?: BurstOption;
}

/**
 * Telegram through grammy, by long polling or webhook.
 *
 * Nothing is acknowledged before it is committed: a webhook request is answered 200 once its
 * update is in the store (500 when the store failed, so Telegram sends it again), and long
 * polling confirms an update (the next `getUpdates` offset) only once it and every update
 * before it is committed (see `pollUpdates`).
 *
 * Parsing follows `parse.ts`: mentions (`@username`, text mentions, `/cmd@bot`), replies,
 * forum topics as threads, `edited_message` as edits. Telegram never tells a bot that a
 * message was deleted, so Telegram turns never get a deletion tombstone.
 *
 * @example
 * ```ts
 * import { Bot } from 'colloquy';
 * import { TelegramChannel } from 'colloquy/telegram';
 *
 * const telegram = new TelegramChannel({ token: process.env.TELEGRAM_BOT_TOKEN! });
 * const bot = new Bot({ channels: [telegram], agents: [new SupportAgent()] });
 * await bot.start(); // polls getUpdates until bot.stop()
 * ```
 */
export class TelegramChannel implements Channel {
  readonly type = 'telegram';
  /** The grammy bot underneath, for anything colloquy does not cover (commands, keyboards…). */
  readonly bot: GrammyBot;
  /** "typing…" in the chat while an agent works on a reply (see `telegramTyping`). */
  readonly typing: TypingIndicator;
  /** What a person's burst of turns gets by default on this channel (its `bursts` option). */
  readonly bursts: BurstOption | undefined;
  /** Why a bot takes one Telegram channel (see docs/telegram.md). */
  readonly onePerBot =
    "a private chat's id is the person's user id for every bot token, so two bots' DMs with one " +
    "person would share ids and the second bot's be dropped as duplicates; run each bot " +
    'token in a Bot of its own, with a store of its own';
  private readonly options: TelegramChannelOptions;
  private handlers: ChannelHandlers | undefined;
  private identity: BotIdentity | undefined;
  private self: TelegramSelf | undefined;
  private polling: { done: Promise<void>; stop: AbortController } | undefined;
  private server: Server | undefined;
  private readonly drafts = new TelegramDrafts();

  constructor(options: TelegramChannelOptions) {
    addSecret(options.token);
    addSecret(options.webhook?.secretToken);
    if (!options.token && options.bot === undefined) {
      throw new TypeError('TelegramChannel: a bot token is required (from @BotFather)');
    }
    const mode = options.mode ?? (options.webhook !== undefined ? 'webhook' : 'polling');
    if (mode === 'webhook' && options.webhook?.secretToken === undefined) {
      throw new TypeError('TelegramChannel: webhook mode needs webhook.secretToken');
    }
    this.options = { ...options, mode };
    this.bot =
      options.bot ??
      new GrammyBot(options.token, { client: options.client, botInfo: options.botInfo });
    this.bot.api.config.use(retryTransformer(options.retry));
    this.typing = telegramTyping(this.bot.api);
    this.bursts = options.bursts;
    this.bot.use((ctx) => this.onUpdate(ctx.update));
  }

  /** A file's bytes, by `getFile` and the Bot API's file URL (see `telegramDownload`). */
  fetchAttachment(
    file: MessageAttachment,
    options: AttachmentFetchOptions,
  ): Promise<FetchedAttachment> {
    const root = this.options.client?.apiRoot ?? TELEGRAM_API_ROOT;
    return telegramDownload(file, options, this.bot.api, root);
  }

  get botIdentity(): BotIdentity | undefined {
    return this.identity;
  }

  /** The port the built-in webhook server listens on, once started. */
  get webhookPort(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  /**
   * Node `(req, res)` handler for Telegram's webhook POSTs: mount it in any HTTP server (or
   * `app.post('/telegram', channel.webhookHandler)` in Express). A wrong or missing
   * `X-Telegram-Bot-Api-Secret-Token` gets 401 and nothing is processed. The answer is 200 once
   * the update is committed to the store, 500 when it could not be (Telegram sends it again).
   */
  readonly webhookHandler = (req: IncomingMessage, res: ServerResponse): void => {
    if (this.options.mode !== 'webhook') {
      res.writeHead(404).end('this channel polls for updates; it takes no webhook');
      return;
    }
    if (this.handlers === undefined) {
      res.writeHead(503).end('channel not started');
      return;
    }
    const secret = req.headers['x-telegram-bot-api-secret-token'];
    if (typeof secret !== 'string' || !sameSecret(secret, this.options.webhook!.secretToken)) {
      res.writeHead(401).end('secret token is wrong');
      return;
    }
    void this.answerWebhook(req, res);
  };

  private async answerWebhook(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let update: Update;
    try {
      const maxBytes = this.options.webhook?.maxBodyBytes ?? DEFAULT_MAX_WEBHOOK_BODY_BYTES;
      update = JSON.parse(await readBoundedBody(req, maxBytes)) as Update;
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        this.report(
          new MalformedEventError(`Refused a Telegram webhook request: ${error.message}`, {
            cause: error,
          }),
        );
        return refuseTooLarge(res);
      }
      this.report(
        new MalformedEventError('Skipped a Telegram webhook request that was not JSON', {
          cause: redactError(error),
        }),
      );
      if (!res.headersSent) res.writeHead(400).end();
      return;
    }
    try {
      await this.bot.handleUpdate(update);
      res.writeHead(200).end();
    } catch (error) {
      const cause = (error as { error?: unknown }).error ?? error; // grammY's BotError
      this.report(toColloquyError(cause, 'update handling'));
      if (!res.headersSent) res.writeHead(500).end();
    }
  }

  async start(handlers: ChannelHandlers): Promise<void> {
    this.handlers = handlers;
    try {
      // Our own getMe, with the bounded retries of the transformer: grammy's `init` would
      // retry an unreachable API forever.
      if (!this.bot.isInited()) this.bot.botInfo = await this.bot.api.getMe();
      if (this.options.mode === 'webhook') await this.startWebhook();
      else await this.startPolling();
    } catch (error) {
      this.handlers = undefined;
      throw toColloquyError(error, 'start');
    }
    const me = this.bot.botInfo;
    this.self = { id: me.id, username: me.username };
    this.identity = {
      id: participantId(me.id),
      username: me.username,
      displayName: displayName(me),
    };
  }

  async stop(): Promise<void> {
    const polling = this.polling;
    this.polling = undefined;
    if (polling !== undefined) {
      polling.stop.abort();
      await polling.done;
    }
    const server = this.server;
    this.server = undefined;
    if (server !== undefined) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    // Polling stops after its last batch is committed, and the server closes once the requests
    // still open (each waiting for its commit) are answered: nothing more is handed over.
    this.handlers = undefined;
  }

  /**
   * Posts a reply: its Markdown as Telegram HTML (see `formatTelegram`), split into parts of at
   * most 4096 characters, the first part as a reply to `replyToMessageId`, all in the forum
   * topic; a part whose markup Telegram refuses is sent again as plain text. Returns every
   * part's `message_id`, in order. Throws `PlatformError` (Telegram refused: code =
   * `error_code`; or a 5xx), `RateLimitError` or `NetworkError` (see `toColloquyError`); the
   * parts that did get through were reported to `options.partPosted`. The files come after
   * the text, one message each; for files alone (no text) the ids returned are those of the
   * messages that carry them.
   */
  async send(message: OutboundMessage, options: SendOptions = {}): Promise<SentMessage> {
    const report = (error: ColloquyError) => this.handlers?.error(error);
    // A message of files alone is named by the messages that carry them.
    if (filesOnly(message)) {
      return filesSent((failed) => sendTelegramFiles(this.bot.api, message, failed), report);
    }
    const sent = await sendParts(
      withKeyboard(telegramParts(message), message),
      (part) => postTelegramPart(this.bot.api, part),
      (error) => toColloquyError(error, 'sendMessage', { conversationId: message.conversationId }),
      options,
    );
    if (!message.files?.length) return sent;
    return { ...sent, files: (await sendTelegramFiles(this.bot.api, message, report)).files };
  }

  /** Adds the bot's reaction to a message (`setMessageReaction`; Telegram's own emoji only). */
  async react(message: MessageRef, emoji: string): Promise<void> {
    try {
      await this.bot.api.setMessageReaction(
        chatIdValue(message.channelId),
        Number(message.messageId),
        [{ type: 'emoji', emoji: emoji as ReactionTypeEmoji['emoji'] }],
      );
    } catch (error) {
      throw toColloquyError(error, 'setMessageReaction');
    }
  }

  /** Where a post into a Telegram conversation goes (see `telegramPostPlace`). */
  placeOf(conversationId: string): PostPlace | undefined {
    return telegramPostPlace(conversationId);
  }

  /**
   * The DM with a person: on Telegram their private chat's id is their user id (the bot can
   * post there once they have started it).
   */
  async openDm(platformUserId: string): Promise<string> {
    if (!/^\d+$/.test(platformUserId)) {
      throw new ColloquyError(`a Telegram user id is a positive number, not "${platformUserId}"`);
    }
    return `telegram:${platformUserId}`;
  }

  /** Lists the bot's commands in Telegram's command menu (`setMyCommands`). */
  async registerCommands(commands: readonly CommandSpec[]): Promise<void> {
    await setTelegramCommands(this.bot.api, commands);
  }

  /**
   * Shows the inline keyboard of `edit` under the reply's last part, or takes it away once a
   * press is answered (Telegram has no disabled buttons): `editMessageReplyMarkup`.
   */
  async editActions(edit: ActionsEdit): Promise<void> {
    const keyboard = edit.chosen === undefined ? inlineKeyboard(edit) : undefined;
    try {
      await this.bot.api.editMessageReplyMarkup(
        chatIdValue(edit.channelId),
        Number(edit.messageIds.at(-1)),
        { reply_markup: keyboard ?? { inline_keyboard: [] } },
      );
    } catch (error) {
      if (notModified(error)) return; // it shows these buttons already (a repeated edit)
      throw toColloquyError(error, 'editMessageReplyMarkup');
    }
  }

  /**
   * Shows a reply as it is written: as a draft in a private chat (see `draftStream`; the
   * person can stop it), else posted, then edited (see `telegramStream`).
   */
  stream(message: OutboundMessage, options?: StreamOptions): ReplyStream {
    if (message.scope === 'dm' && this.options.drafts !== false) {
      return draftStream(this.bot.api, message, this.drafts, options);
    }
    return telegramStream(this.bot.api, message, options);
  }

  private async startPolling(): Promise<void> {
    const handlers = this.handlers as ChannelHandlers;
    // Keep pending updates: what people said while the bot was down is still recorded.
    await this.bot.api.deleteWebhook({ drop_pending_updates: false });
    const stop = new AbortController();
    const poll = (signal: AbortSignal) =>
      pollUpdates({
        api: this.bot.api,
        timeoutSeconds: this.options.pollingTimeoutSeconds ?? 30,
        limit: 100,
        room: () => handlers.capacity(this.options.maxUnprocessed ?? 300),
        handle: (update) => this.bot.handleUpdate(update),
        report: (error, method) =>
          this.report(toColloquyError((error as { error?: unknown }).error ?? error, method)),
        signal,
      }).catch((error: unknown) => {
        throw toColloquyError(error, 'getUpdates');
      });
    // Telegram allows one poller per token: instances sharing a store take turns on a lease,
    // the others standing by (a 409 then means the lease's old holder had not stopped yet).
    const botId = String(this.bot.botInfo.id);
    const done = (
      handlers.lead === undefined
        ? poll(stop.signal)
        : handlers.lead(leaseNames.telegramPoller(botId), poll, stop.signal)
    ).catch((error: unknown) => {
      // 401 (token revoked) or 409 (another instance polls): polling has stopped.
      this.report(toColloquyError(error, 'getUpdates'));
    });
    this.polling = { done, stop };
  }

  private async startWebhook(): Promise<void> {
    const webhook = this.options.webhook as TelegramWebhookOptions;
    if (webhook.url !== undefined) {
      await this.bot.api.setWebhook(webhook.url, {
        secret_token: webhook.secretToken,
        allowed_updates: TELEGRAM_ALLOWED_UPDATES,
      });
    }
    if (webhook.port === undefined) return;
    const path = webhook.path ?? '/telegram';
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (req.method !== 'POST' || url.pathname !== path) {
        res.writeHead(404).end();
        return;
      }
      this.webhookHandler(req, res);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(webhook.port, webhook.host ?? '0.0.0.0', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
  }

  /**
   * Runs for every update grammy receives. Resolves once the update is committed (or needs no
   * commit: a malformed or ignored update); rejects when the store failed, so the update is not
   * acknowledged. A redelivery is handed over again: the store keeps the turn once and the bot
   * answers it once. The turn itself goes on inside the bot.
   */
  private onUpdate(update: Update): Promise<void> {
    const handlers = this.handlers;
    if (handlers === undefined) return Promise.reject(new ColloquyError('the channel is stopped'));
    return this.handOver(update, handlers);
  }

  private async handOver(update: Update, handlers: ChannelHandlers): Promise<void> {
    const stop = update.stopped_message_generation;
    if (stop !== undefined) {
      // The person stopped a reply being written: the reply ends with what it showed.
      this.drafts.stopped(stop.chat.id, stop.draft_id);
      return;
    }
    const self = this.self ?? { id: this.bot.botInfo.id, username: this.bot.botInfo.username };
    if (update.callback_query !== undefined) return this.pressed(update.callback_query, handlers);
    if (update.message_reaction !== undefined) {
      for (const change of telegramReactions(update.message_reaction)) {
        await handlers.reaction?.(change);
      }
      return;
    }
    const parsed = parseUpdate(update, self);
    if (parsed.kind === 'malformed') {
      const error = new MalformedEventError(
        `Skipped a malformed Telegram update ${String(update.update_id)}: ${parsed.reason}`,
      );
      Object.assign(error, { update });
      this.report(error);
    } else if (parsed.kind === 'message') await handlers.message(parsed.message);
    else if (parsed.kind === 'edit') await handlers.edit(parsed.edit);
  }

  /**
   * A button press: committed as a turn, then answered (`answerCallbackQuery`, which stops the
   * button's spinner); a query that is not colloquy's is answered and not recorded.
   */
  private async pressed(query: CallbackQuery, handlers: ChannelHandlers): Promise<void> {
    const turn = pressTurn(query);
    if (turn !== undefined) await handlers.message(turn);
    try {
      await this.bot.api.answerCallbackQuery(query.id);
    } catch (error) {
      this.report(toColloquyError(error, 'answerCallbackQuery'));
    }
  }

  private report(error: ColloquyError): void {
    if (this.handlers !== undefined) this.handlers.error(error);
    else consoleLogger.error(`${error.name}: ${error.message}`, { cause: error.cause });
  }
}

/** Compares secrets in constant time. */
function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
