/**
 * Where a bot's errors go: its handler (`bot.catch`), by default a line in its log.
 */
import { ColloquyError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ErrorHandler } from './options.js';

/**
 * The handler a bot starts with: one error line in `logger`, with the error's conversation,
 * turn and cause.
 *
 * @example
 * ```ts
 * let handler = logErrors(consoleLogger);
 * ```
 */
export function logErrors(logger: Logger): ErrorHandler {
  return (error) =>
    logger.error(`${error.name}: ${error.message}`, {
      conversationId: error.conversationId,
      messageId: error.messageId,
      cause: error.cause,
    });
}

/**
 * Sends `error` to `handler` (wrapped in a `ColloquyError` if it is not one); the handler
 * failing is logged in `logger`, never thrown.
 *
 * @example
 * ```ts
 * reportTo(handler, logger, new Error('lost'));
 * ```
 */
export function reportTo(handler: ErrorHandler, logger: Logger, error: unknown): void {
  const err =
    error instanceof ColloquyError
      ? error
      : new ColloquyError(error instanceof Error ? error.message : String(error), {
          cause: error,
        });
  const fallback = (cause: unknown) =>
    logger.error('the error handler threw', { error: err, cause });
  try {
    void Promise.resolve(handler(err)).catch(fallback);
  } catch (cause) {
    fallback(cause);
  }
}
