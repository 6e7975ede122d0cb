import { redactText } from './logger.js';

/**
 * Errors carry their context and their cause. Everything colloquy reports goes through one
 * replaceable handler (`bot.catch`), as a `ColloquyError` subclass.
 *
 * @example
 * ```ts
 * bot.catch((err) => {
 *   if (err instanceof PlatformError) console.error(err.platform, err.code, err.message);
 * });
 * ```
 */
export class ColloquyError extends Error {
  override name = 'ColloquyError';
  /** The conversation the failure happened in, when there was one. */
  readonly conversationId?: string;
  /** The colloquy message id the failure happened with, when there was one. */
  readonly messageId?: string;

  constructor(
    message: string,
    options: { cause?: unknown; conversationId?: string; messageId?: string } = {},
  ) {
    // Messages are often built from a library's error text, which can quote a key or token.
    super(redactText(message), { cause: options.cause });
    this.conversationId = options.conversationId;
    this.messageId = options.messageId;
  }
}

/**
 * The store could not write or read (locked, full, closed, schema too new, or a turn it can
 * never accept).
 *
 * @example
 * ```ts
 * throw new StoreError('cannot append a turn: SQLITE_BUSY', { cause, transient: true });
 * ```
 */
export class StoreError extends ColloquyError {
  override name = 'StoreError';
  /**
   * Whether trying again later can succeed: true for a locked, full or closed store, false
   * for a turn the store rejects for good (invalid timestamp, constraint, unserialisable
   * metadata). Undefined when the store cannot tell; capture then guesses from the cause.
   */
  declare readonly transient?: boolean;

  constructor(
    message: string,
    options: {
      cause?: unknown;
      conversationId?: string;
      messageId?: string;
      transient?: boolean;
    } = {},
  ) {
    super(message, options);
    if (options.transient !== undefined) this.transient = options.transient;
  }
}

/**
 * Whether a failed store call can succeed when tried again later: unless the store says it
 * cannot (`StoreError { transient: false }`), a failure is taken to pass.
 *
 * @example
 * ```ts
 * mayPass(new StoreError('cannot read: SQLITE_BUSY', { transient: true })); // true
 * mayPass(new StoreError('cannot read: bad metadata', { transient: false })); // false
 * ```
 */
export function mayPass(error: unknown): boolean {
  return !(error instanceof StoreError && error.transient === false);
}

/**
 * The platform answered and refused (bad token, missing permission, unknown channel), or
 * answered with a server error. `code` is the platform's own code for a refusal (Slack's
 * `not_in_channel`, Discord's `50013`, Telegram's `403`), `http_<status>` for an HTTP status
 * without one (`http_502`), `rate_limited` for a {@link RateLimitError}.
 *
 * @example
 * ```ts
 * bot.catch((err) => {
 *   if (err instanceof PlatformError && err.transient) console.warn('try again later', err.code);
 * });
 * ```
 */
export class PlatformError extends ColloquyError {
  override name = 'PlatformError';
  /**
   * Whether the same call can succeed later: true for a server error (5xx) or a rate limit,
   * false for a refusal (the token, a permission, the channel). Undefined when the channel
   * cannot tell.
   */
  declare readonly transient?: boolean;

  constructor(
    readonly platform: string,
    message: string,
    options: {
      cause?: unknown;
      conversationId?: string;
      messageId?: string;
      code?: string;
      transient?: boolean;
    } = {},
  ) {
    super(message, options);
    this.code = options.code;
    if (options.transient !== undefined) this.transient = options.transient;
  }
  readonly code?: string;
}

/**
 * The platform asked colloquy to slow down (HTTP 429, or its own "rate limited" answer) and the
 * platform library stopped waiting. Always `code: 'rate_limited'` and `transient: true`.
 *
 * @example
 * ```ts
 * throw new RateLimitError('telegram', 'Telegram rate-limited sendMessage', { retryAfterMs: 30_000 });
 * ```
 */
export class RateLimitError extends PlatformError {
  override name = 'RateLimitError';
  /** How long the platform asked to wait before the next call, in ms, when it said. */
  declare readonly retryAfterMs?: number;

  constructor(
    platform: string,
    message: string,
    options: {
      cause?: unknown;
      conversationId?: string;
      messageId?: string;
      retryAfterMs?: number;
    } = {},
  ) {
    super(platform, message, { ...options, code: 'rate_limited', transient: true });
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * The platform could not be reached (DNS, refused connection, timeout). Always `transient`.
 *
 * @example
 * ```ts
 * throw new NetworkError('Could not reach Slack for chat.postMessage: ECONNREFUSED', { cause });
 * ```
 */
export class NetworkError extends ColloquyError {
  override name = 'NetworkError';
  /** Trying again later can succeed. */
  readonly transient = true;
}

/**
 * A file is larger than the caller would read (`AttachmentFetchOptions.maxBytes`): the platform
 * said so, or its body grew past it and was no longer read.
 *
 * @example
 * ```ts
 * throw new AttachmentTooLargeError('slack', 'invoice.png is over 1 MB', { maxBytes: 1_048_576 });
 * ```
 */
export class AttachmentTooLargeError extends ColloquyError {
  override name = 'AttachmentTooLargeError';
  /** The limit that was passed, in bytes. */
  readonly maxBytes: number;

  constructor(
    readonly platform: string,
    message: string,
    options: { maxBytes: number; cause?: unknown; conversationId?: string; messageId?: string },
  ) {
    super(message, options);
    this.maxBytes = options.maxBytes;
  }
}

/** A payload from a platform that colloquy could not understand; it was skipped. */
export class MalformedEventError extends ColloquyError {
  override name = 'MalformedEventError';
}

/** An agent or the model failed while answering a turn. */
export class AgentError extends ColloquyError {
  override name = 'AgentError';
}

/**
 * What a failed send means for the reply: `'failed'` when the platform answered and refused
 * it, `'unconfirmed'` when no answer came (it may have been posted).
 */
export function deliveryAfterFailure(error: unknown): 'failed' | 'unconfirmed' {
  if (error instanceof StoreError) return 'unconfirmed';
  if (error instanceof NetworkError) return 'unconfirmed';
  return error instanceof ColloquyError || error instanceof Error ? 'failed' : 'unconfirmed';
}

/**
 * The text of a thrown value: an Error's message (its name when the message is empty), or
 * the value as a string.
 *
 * @example
 * ```ts
 * messageOf(new Error('SQLITE_BUSY')); // 'SQLITE_BUSY'
 * messageOf('timeout'); // 'timeout'
 * ```
 */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

/**
 * Text folded onto one line: each line break, with the blanks around it, becomes one space.
 *
 * @example
 * ```ts
 * oneLine('no such table: messages\n  at line 1'); // 'no such table: messages at line 1'
 * ```
 */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
