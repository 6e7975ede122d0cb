/**
 * Outbound side of the Telegram channel: a reply's Markdown as Telegram HTML split into
 * `sendMessage` calls, retrying rate-limited and failed calls, and turning grammy's errors
 * into colloquy's.
 *
 * @example
 * ```ts
 * import { toSendMessagePayloads } from 'colloquy/telegram';
 * toSendMessagePayloads({ conversationId: 'telegram:42', scope: 'dm', channelId: '42', content: '**hi**' });
 * // [{ chat_id: 42, text: '<b>hi</b>', parse_mode: 'HTML' }]
 * ```
 */
import type { Transformer } from 'grammy';
import type { ReplyParameters } from 'grammy/types';
import type { OutboundMessage } from '../../src/channel.js';
import { ColloquyError } from '../../src/errors.js';
import { redactError, redactText } from '../../src/logger.js';
import type { Line, Mark } from '../shared/markdown.js';
import { neverSent, platformError, type PlatformFailure } from '../shared/platform.js';
import { renderMarkdown } from '../shared/render.js';
import type { Dialect } from '../shared/render.js';

/** Telegram's limit for one text message, in UTF-16 code units of its text once parsed. */
export const TELEGRAM_MESSAGE_LIMIT = 4096;

/** The `sendMessage` fields colloquy sets. */
export interface SendMessagePayload {
  chat_id: number | string;
  text: string;
  parse_mode?: 'HTML';
  message_thread_id?: number;
  reply_parameters?: ReplyParameters;
}

/**
 * A reply's Markdown as the Telegram HTML of each message to send (`parse_mode: 'HTML'`), in
 * order: bold, italic, strikethrough, code, links, quotes, code blocks with their language;
 * headings bold, list markers as `•` / `1.`, tables as aligned text in a `<pre>` block. Every
 * part holds at most `limit` characters once Telegram has parsed it and is valid on its own.
 * Works on a prefix of an answer being written (see `renderMarkdown`).
 *
 * @example
 * ```ts
 * import { formatTelegram } from 'colloquy/telegram';
 * formatTelegram('**Done** — see [the docs](https://example.com)');
 * // ['<b>Done</b> — see <a href="https://example.com">the docs</a>']
 * ```
 */
export function formatTelegram(markdown: string, limit = TELEGRAM_MESSAGE_LIMIT): string[] {
  return renderMarkdown(markdown, { ...telegramDialect, limit });
}

/**
 * What a Telegram HTML text shows: tags dropped, entities read. Sent instead of the HTML when
 * Telegram refuses the markup.
 *
 * @example
 * ```ts
 * telegramPlainText('<b>a &lt; b</b>'); // 'a < b'
 * ```
 */
export function telegramPlainText(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&(lt|gt|quot|amp|#\d+|#x[\da-f]+);/gi, (_m, name: string) => {
      const lower = name.toLowerCase();
      if (lower.startsWith('#x')) return String.fromCodePoint(parseInt(lower.slice(2), 16));
      if (lower.startsWith('#')) return String.fromCodePoint(Number(lower.slice(1)));
      return ENTITY_TEXT[lower] ?? '';
    });
}

const ENTITY_TEXT: Record<string, string> = { lt: '<', gt: '>', quot: '"', amp: '&' };

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttribute = (text: string) => escapeHtml(text).replace(/"/g, '&quot;');
const TAG = { bold: 'b', italic: 'i', strike: 's', code: 'code', link: 'a' } as const;

/** Telegram lets no entity contain a link or code except bold, italic and the like. */
const opaque = (outer: readonly Mark[]) =>
  outer.some((mark) => mark.kind === 'link' || mark.kind === 'code');

const telegramDialect: Dialect = {
  limit: TELEGRAM_MESSAGE_LIMIT,
  size: (html) => telegramPlainText(html).length,
  text: escapeHtml,
  atom: escapeHtml,
  open: (mark, outer) => {
    if ((mark.kind === 'link' || mark.kind === 'code') && opaque(outer)) return '';
    return mark.kind === 'link' ? `<a href="${escapeAttribute(mark.url)}">` : `<${TAG[mark.kind]}>`;
  },
  close: (mark, outer) =>
    (mark.kind === 'link' || mark.kind === 'code') && opaque(outer) ? '' : `</${TAG[mark.kind]}>`,
  line: (line, body) => escapeHtml(line.lead) + body,
  join: (lines: readonly Line[], rendered: readonly string[]) => {
    let out = '';
    rendered.forEach((text, i) => {
      const quote = lines[i]?.quote === true;
      const opens = quote && lines[i - 1]?.quote !== true;
      const closes = quote && lines[i + 1]?.quote !== true;
      out += `${i > 0 ? '\n' : ''}${opens ? '<blockquote>' : ''}${text}${closes ? '</blockquote>' : ''}`;
    });
    return out;
  },
  code: (lang, code) =>
    lang === ''
      ? `<pre>${escapeHtml(code)}</pre>`
      : `<pre><code class="language-${escapeAttribute(lang)}">${escapeHtml(code)}</code></pre>`,
};

/** One message of a reply: the HTML to send, and the plain text to send if that is refused. */
export interface TelegramPart {
  payload: SendMessagePayload;
  plainText: string;
}

/**
 * One `sendMessage` payload per part of the reply, in order (see `formatTelegram`). The first
 * part replies to the message being answered (if it has been deleted meanwhile, it is sent
 * without the reply); every part stays in the forum topic.
 *
 * @example
 * ```ts
 * toSendMessagePayloads({ ...outbound, content: 'x'.repeat(10_000) }).length; // 3
 * ```
 */
export function toSendMessagePayloads(
  message: OutboundMessage,
  limit = TELEGRAM_MESSAGE_LIMIT,
): SendMessagePayload[] {
  return telegramParts(message, limit).map((part) => part.payload);
}

/**
 * The parts of a reply with the plain text of each, for a retry without markup.
 *
 * @example
 * ```ts
 * telegramParts({ ...outbound, content: '**hi**' })[0]?.plainText; // 'hi'
 * ```
 */
export function telegramParts(
  message: OutboundMessage,
  limit = TELEGRAM_MESSAGE_LIMIT,
): TelegramPart[] {
  return formatTelegram(message.content, limit).map((text, index) => {
    const payload: SendMessagePayload = {
      chat_id: chatIdValue(message.channelId),
      text,
      parse_mode: 'HTML',
    };
    if (message.threadId !== undefined && message.scope === 'thread') {
      payload.message_thread_id = Number(message.threadId);
    }
    if (index === 0 && message.replyToMessageId !== undefined) {
      payload.reply_parameters = {
        message_id: Number(message.replyToMessageId),
        allow_sending_without_reply: true,
      };
    }
    return { payload, plainText: telegramPlainText(text) };
  });
}

/**
 * True for Telegram's refusal of a text's markup (400 "can't parse entities"): the text is
 * then sent again without it.
 *
 * @example
 * ```ts
 * refusedMarkup({ error_code: 400, description: "Bad Request: can't parse entities: …" }); // true
 * ```
 */
export function refusedMarkup(error: unknown): boolean {
  return (
    isApiError(error) && error.error_code === 400 && /can't parse entities/i.test(error.description)
  );
}

/**
 * True when Telegram refused an edit that changes nothing ("message is not modified"): the
 * message shows that text (and those buttons) already.
 *
 * @example
 * ```ts
 * notModified({ error_code: 400, description: 'Bad Request: message is not modified: …' }); // true
 * ```
 */
export function notModified(error: unknown): boolean {
  return (
    isApiError(error) &&
    error.error_code === 400 &&
    /message is not modified/i.test(error.description)
  );
}

/** A numeric chat id as a number (Telegram also takes `@channelusername` strings). */
export function chatIdValue(channelId: string): number | string {
  return /^-?\d+$/.test(channelId) ? Number(channelId) : channelId;
}

/** How the API transformer retries. */
export interface RetryOptions {
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  /** A 429 asking to wait longer than this many seconds is not retried (default 60). */
  maxRetryAfterSeconds?: number;
  /** First backoff for 5xx and network failures, doubled each time (default 250 ms). */
  baseDelayMs?: number;
}

/**
 * Methods that may be called again after a network failure although Telegram may have acted
 * on the first call: reads, and changes that leave the same state when repeated. A post
 * (`sendMessage`, `sendPhoto`, `copyMessage`, `forwardMessage`…) is not among them: called
 * again it shows twice.
 */
function repeatable(method: string): boolean {
  return (
    /^(get|edit|set|delete|pin|unpin)[A-Z]/.test(method) ||
    method === 'answerCallbackQuery' ||
    method === 'sendChatAction' ||
    method === 'sendMessageDraft'
  );
}

/**
 * A grammy API transformer that retries a call on 429 (after `parameters.retry_after`), on 5xx
 * and on network failures (with exponential backoff), a bounded number of times. A network
 * failure is retried only when the call is a read or a change that may be repeated
 * (`getMe`, `editMessageText`, `setWebhook`…), or when the request provably never left (a
 * refused connection, see `neverSent`): a post whose answer is lost is not sent again, its
 * error reaches the channel (a `NetworkError`) and the reply is recorded `unconfirmed`, at most
 * once. `getUpdates` is left alone: grammy's polling loop has its own retries and must stay
 * cancellable.
 *
 * @example
 * ```ts
 * bot.api.config.use(retryTransformer({ maxRetries: 3 }));
 * ```
 */
export function retryTransformer(options: RetryOptions = {}): Transformer {
  const maxRetries = options.maxRetries ?? 3;
  const maxRetryAfter = options.maxRetryAfterSeconds ?? 60;
  const baseDelay = options.baseDelayMs ?? 250;
  return async (prev, method, payload, signal) => {
    if (method === 'getUpdates') return prev(method, payload, signal);
    for (let attempt = 0; ; attempt++) {
      let wait: number | undefined;
      try {
        const response = await prev(method, payload, signal);
        if (response.ok || attempt >= maxRetries) return response;
        const retryAfter = response.parameters?.retry_after;
        if (response.error_code === 429) {
          if (retryAfter === undefined || retryAfter > maxRetryAfter) return response;
          wait = retryAfter * 1000;
        } else if (response.error_code >= 500) {
          wait = baseDelay * 2 ** attempt;
        } else {
          return response; // a permanent refusal: 400, 401, 403, 404…
        }
      } catch (error) {
        // grammy throws HttpError for network failures and aborts.
        if (attempt >= maxRetries || signal?.aborted === true) throw error;
        if (!repeatable(method) && !neverSent(error)) throw error;
        wait = baseDelay * 2 ** attempt;
      }
      await sleep(wait);
    }
  };
}

/** The shape of grammy's `GrammyError`, read structurally so this file needs no runtime import. */
interface ApiErrorLike {
  error_code: number;
  description: string;
  method?: string;
  parameters?: { retry_after?: number };
}

function isApiError(error: unknown): error is ApiErrorLike {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as ApiErrorLike).error_code === 'number' &&
    typeof (error as ApiErrorLike).description === 'string'
  );
}

/**
 * A failed Bot API call as a colloquy error, by the policy every channel shares
 * ({@link platformError}): Telegram refused (`error_code` 400, 401, 403…) → `PlatformError`
 * with that code and Telegram's description; 429 (a wait longer than the retry transformer
 * takes, or its retries spent) → `RateLimitError` with `parameters.retry_after`; 5xx →
 * `PlatformError` `http_<status>` (transient); anything else → `NetworkError`. The bot token
 * never reaches the result: the message is redacted and `cause` is a redacted copy of grammy's
 * error ({@link redactError}), not the error itself, whose request URL holds the token.
 *
 * @example
 * ```ts
 * try { await bot.api.sendMessage(42, 'hi'); }
 * catch (err) { handlers.error(toColloquyError(err, 'sendMessage', { conversationId })); }
 * ```
 */
export function toColloquyError(
  error: unknown,
  method: string,
  context: { conversationId?: string; messageId?: string } = {},
): ColloquyError {
  if (error instanceof ColloquyError) return error;
  const cause = redactError(error);
  return platformError('telegram', method, telegramFailure(error, cause), { ...context, cause });
}

/** What grammy threw, read: a `GrammyError` (the API answered) or an `HttpError` (it did not). */
function telegramFailure(error: unknown, cause: Error): PlatformFailure {
  if (isApiError(error)) {
    const retryAfter = error.parameters?.retry_after;
    if (error.error_code === 429) {
      return {
        kind: 'rate-limited',
        ...(retryAfter !== undefined && { retryAfterMs: retryAfter * 1000 }),
      };
    }
    if (error.error_code >= 500) return { kind: 'http', status: error.error_code };
    return {
      kind: 'refused',
      code: String(error.error_code),
      detail: redactText(error.description),
    };
  }
  // grammy's HttpError says which call failed; the reason (refused, timed out…) is underneath.
  const reason = cause.cause instanceof Error ? ` (${cause.cause.message})` : '';
  return { kind: 'unreachable', detail: `${cause.message}${reason}` };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
