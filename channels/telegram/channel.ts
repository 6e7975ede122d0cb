import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Bot as GrammyBot, webhookCallback } from 'grammy';
import type { ApiClientOptions } from 'grammy';
import type { Update, UserFromGetMe } from 'grammy/types';
import type {
  BotIdentity,
  Channel,
  ChannelHandlers,
  OutboundMessage,
  SentMessage,
} from '../../src/channel.js';
import { ColloquyError, MalformedEventError } from '../../src/errors.js';
import { addSecret, consoleLogger, redactError } from '../../src/logger.js';
import { sendParts } from '../../src/platform.js';
import { RecentKeys } from '../../src/recent.js';
import { retryTransformer, toColloquyError, toSendMessagePayloads } from './format.js';
import type { RetryOptions } from './format.js';
import { displayName, parseUpdate, participantId } from './parse.js';
import type { TelegramSelf } from './parse.js';

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
   * Answer Telegram after this many ms even if the turn is still being handled (default 10 000);
   * handling goes on. Telegram redelivers unanswered updates, which would only be deduplicated.
   */
  answerWithinMs?: number;
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
  /** How many recent `update_id`s to remember to drop redelivered updates (default 1000). */
  recentUpdates?: number;
}

/**
 * Telegram through grammy, by long polling or webhook.
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
  private readonly options: TelegramChannelOptions;
  private handlers: ChannelHandlers | undefined;
  private identity: BotIdentity | undefined;
  private self: TelegramSelf | undefined;
  private polling: Promise<void> | undefined;
  private server: Server | undefined;
  private readonly recent: RecentKeys<number>;
  /** Updates handed to the runtime and not yet handled, for `stop` to wait for. */
  private readonly inFlight = new Set<Promise<void>>();
  private readonly callback: (req: IncomingMessage, res: ServerResponse) => Promise<unknown>;

  constructor(options: TelegramChannelOptions) {
    addSecret(options.token);
    addSecret(options.webhook?.secretToken);
    if (!options.token && options.bot === undefined) {
      throw new TypeError('TelegramChannel: a bot token is required (from @BotFather)');
    }
    this.recent = new RecentKeys(options.recentUpdates ?? 1000);
    const mode = options.mode ?? (options.webhook !== undefined ? 'webhook' : 'polling');
    if (mode === 'webhook' && options.webhook?.secretToken === undefined) {
      throw new TypeError('TelegramChannel: webhook mode needs webhook.secretToken');
    }
    this.options = { ...options, mode };
    this.bot =
      options.bot ??
      new GrammyBot(options.token, { client: options.client, botInfo: options.botInfo });
    this.bot.api.config.use(retryTransformer(options.retry));
    this.bot.use(async (ctx) => this.onUpdate(ctx.update));
    this.bot.catch((err) => this.report(toColloquyError(err.error, 'update handling')));
    const webhook = options.webhook;
    this.callback =
      webhook === undefined || mode !== 'webhook'
        ? () => Promise.resolve()
        : webhookCallback(this.bot, 'http', {
            secretToken: webhook.secretToken,
            onTimeout: 'return',
            timeoutMilliseconds: webhook.answerWithinMs ?? 10_000,
          });
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
   * `X-Telegram-Bot-Api-Secret-Token` gets 401 and nothing is processed.
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
    this.callback(req, res).catch((error: unknown) => {
      const unreadable = error instanceof SyntaxError; // the body was not JSON
      this.report(
        unreadable
          ? new MalformedEventError('Skipped a Telegram webhook request that was not JSON', {
              cause: redactError(error),
            })
          : new ColloquyError('Telegram webhook request failed', { cause: redactError(error) }),
      );
      if (!res.headersSent) res.writeHead(unreadable ? 400 : 500);
      res.end();
    });
  };

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
    if (this.polling !== undefined) {
      if (this.bot.isRunning()) {
        await this.bot
          .stop()
          .catch((error: unknown) => this.report(toColloquyError(error, 'stop')));
      }
      await this.polling;
      this.polling = undefined;
    }
    const server = this.server;
    this.server = undefined;
    if (server !== undefined) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    // No update arrives any more: let the turns already handed over finish.
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    this.handlers = undefined;
  }

  /**
   * Posts a reply: split into parts of at most 4096 characters, the first part as a reply to
   * `replyToMessageId`, all in the forum topic. Returns every part's `message_id`, in order.
   * Throws `PlatformError` (Telegram refused: code = `error_code`; or a 5xx), `RateLimitError`
   * or `NetworkError` (see `toColloquyError`); when some parts did get through, their ids are
   * on the error as `sentMessageIds`.
   */
  async send(message: OutboundMessage): Promise<SentMessage> {
    return sendParts(
      toSendMessagePayloads(message),
      async ({ chat_id, text, ...other }) => {
        const sent = await this.bot.api.sendMessage(chat_id, text, other);
        return { id: String(sent.message_id), timestamp: new Date(sent.date * 1000).toISOString() };
      },
      (error) => toColloquyError(error, 'sendMessage', { conversationId: message.conversationId }),
    );
  }

  private async startPolling(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      let started = false;
      this.polling = this.bot
        .start({
          // Keep pending updates: what people said while the bot was down is still recorded.
          drop_pending_updates: false,
          timeout: this.options.pollingTimeoutSeconds ?? 30,
          onStart: () => {
            started = true;
            resolve();
          },
        })
        .catch((error: unknown) => {
          if (!started) return reject(error);
          // 401 (token revoked) or 409 (another instance polls): polling has stopped.
          this.report(toColloquyError(error, 'getUpdates'));
        });
    });
  }

  private async startWebhook(): Promise<void> {
    const webhook = this.options.webhook as TelegramWebhookOptions;
    if (webhook.url !== undefined) {
      await this.bot.api.setWebhook(webhook.url, { secret_token: webhook.secretToken });
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
   * Runs for every update grammy receives; never throws. The turn is handed to the runtime,
   * which runs the turns of one conversation in order and different chats concurrently; polling
   * goes on to the next update at once, so one slow answer does not hold up other chats. A
   * webhook request waits for its turn (up to `answerWithinMs`), so Telegram is answered once
   * the turn is handled.
   */
  private async onUpdate(update: Update): Promise<void> {
    const handlers = this.handlers;
    const self = this.self ?? { id: this.bot.botInfo.id, username: this.bot.botInfo.username };
    if (handlers === undefined) return;
    if (this.seen(update.update_id)) return;
    const parsed = parseUpdate(update, self);
    if (parsed.kind === 'malformed') {
      const error = new MalformedEventError(
        `Skipped a malformed Telegram update ${String(update.update_id)}: ${parsed.reason}`,
      );
      Object.assign(error, { update });
      this.report(error);
      return;
    }
    let turn: Promise<void>;
    if (parsed.kind === 'message') {
      const { conversationId } = parsed.message;
      turn = this.track(handlers.message(parsed.message), conversationId);
    } else if (parsed.kind === 'edit') turn = this.track(handlers.edit(parsed.edit));
    else return;
    if (this.options.mode === 'webhook') await turn;
  }

  /** Keeps a handed-over turn in flight until it is handled; never rejects. */
  private track(work: Promise<void>, conversationId?: string): Promise<void> {
    const turn: Promise<void> = work
      .catch((error: unknown) => {
        this.report(
          error instanceof ColloquyError
            ? error
            : new ColloquyError('Telegram update handling failed', {
                cause: error,
                conversationId,
              }),
        );
      })
      .finally(() => this.inFlight.delete(turn));
    this.inFlight.add(turn);
    return turn;
  }

  /** True when this update_id was handled recently (a redelivery); remembers it otherwise. */
  private seen(updateId: unknown): boolean {
    if (typeof updateId !== 'number') return false;
    return !this.recent.add(updateId);
  }

  private report(error: ColloquyError): void {
    if (this.handlers !== undefined) this.handlers.error(error);
    else consoleLogger.error(`${error.name}: ${error.message}`, { cause: error.cause });
  }
}
