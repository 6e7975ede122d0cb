/**
 * Outbound side of the Telegram channel: splitting a reply into `sendMessage` calls, retrying
 * rate-limited and failed calls, and turning grammy's errors into colloquy's.
 *
 * @example
 * ```ts
 * import { toSendMessagePayloads } from 'colloquy/telegram';
 * toSendMessagePayloads({ conversationId: 'telegram:42', scope: 'dm', channelId: '42', content: 'hi' });
 * // [{ chat_id: 42, text: 'hi' }]
 * ```
 */
import type { Transformer } from 'grammy';
import type { ReplyParameters } from 'grammy/types';
import type { OutboundMessage } from '../../src/channel.js';
import { ColloquyError } from '../../src/errors.js';
import { redactError, redactText } from '../../src/logger.js';
import { platformError, type PlatformFailure } from '../shared/platform.js';
import { splitMessage } from '../shared/split.js';

/** Telegram's limit for one text message, in UTF-16 code units. */
export const TELEGRAM_MESSAGE_LIMIT = 4096;

/** The `sendMessage` fields colloquy sets. */
export interface SendMessagePayload {
  chat_id: number | string;
  text: string;
  message_thread_id?: number;
  reply_parameters?: ReplyParameters;
}

/**
 * One `sendMessage` payload per part of the reply, in order. The first part replies to the
 * message being answered (if it has been deleted meanwhile, it is sent without the reply);
 * every part stays in the forum topic.
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
  const parts = splitMessage(message.content, limit).filter((part) => part.trim().length > 0);
  return parts.map((text, index) => {
    const payload: SendMessagePayload = { chat_id: chatIdValue(message.channelId), text };
    if (message.threadId !== undefined && message.scope === 'thread') {
      payload.message_thread_id = Number(message.threadId);
    }
    if (index === 0 && message.replyToMessageId !== undefined) {
      payload.reply_parameters = {
        message_id: Number(message.replyToMessageId),
        allow_sending_without_reply: true,
      };
    }
    return payload;
  });
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
 * A grammy API transformer that retries a call on 429 (after `parameters.retry_after`), on 5xx
 * and on network failures (with exponential backoff), a bounded number of times. `getUpdates`
 * is left alone: grammy's polling loop has its own retries and must stay cancellable.
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
