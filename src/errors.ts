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
    super(message, { cause: options.cause });
    this.conversationId = options.conversationId;
    this.messageId = options.messageId;
  }
}

/** The store could not write or read (locked, full, closed, schema too new). */
export class StoreError extends ColloquyError {
  override name = 'StoreError';
}

/** The platform answered and refused (bad token, missing permission, unknown channel). */
export class PlatformError extends ColloquyError {
  override name = 'PlatformError';
  constructor(
    readonly platform: string,
    message: string,
    options: { cause?: unknown; conversationId?: string; messageId?: string; code?: string } = {},
  ) {
    super(message, options);
    this.code = options.code;
  }
  readonly code?: string;
}

/** The platform could not be reached (DNS, refused connection, timeout). */
export class NetworkError extends ColloquyError {
  override name = 'NetworkError';
}

/** A payload from a platform that colloquy could not understand; it was skipped. */
export class MalformedEventError extends ColloquyError {
  override name = 'MalformedEventError';
}

/** An agent or the model failed while answering a turn. */
export class AgentError extends ColloquyError {
  override name = 'AgentError';
}
