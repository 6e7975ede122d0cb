/**
 * What every platform channel shares on the way out: one policy that turns a failed platform
 * call into a colloquy error, and the loop that posts a reply split into parts. Each channel
 * reads its own library's error shape into a {@link PlatformFailure} (that stays in its
 * folder); what the failure becomes is decided here, the same way for every platform.
 *
 * | failure | error | `code` | `transient` |
 * |---|---|---|---|
 * | `refused` (the platform said no, with its code) | `PlatformError` | the platform's code | false |
 * | `rate-limited` (429, or the platform's "rate limited") | `RateLimitError` | `rate_limited` | true |
 * | `http` 5xx (a server error, after the library's retries) | `PlatformError` | `http_<status>` | true |
 * | `http` other (a status without a platform code) | `PlatformError` | `http_<status>` | false |
 * | `unreachable` (DNS, refused connection, timeout) | `NetworkError` | – | true |
 *
 * @example
 * ```ts
 * const sent = await sendParts(
 *   ['part one', 'part two'],
 *   async (text) => ({ id: (await api.post(channelId, text)).id }),
 *   (error) => platformError('acme', 'a message', readAcmeFailure(error), { cause: redactError(error) }),
 * );
 * ```
 */
import type { SendOptions, SentMessage } from '../../src/channel.js';
import type { ColloquyError } from '../../src/errors.js';
import { NetworkError, PlatformError, RateLimitError } from '../../src/errors.js';

/** A failed platform call, as a channel reads it from its library's error. */
export type PlatformFailure =
  /** The platform answered and refused, with its own code (`not_in_channel`, `50013`, `403`). */
  | { kind: 'refused'; code: string; detail?: string }
  /** The platform asked to slow down; `retryAfterMs` when it said for how long. */
  | { kind: 'rate-limited'; retryAfterMs?: number }
  /** An HTTP status with no platform code (a 5xx after the library's retries, say). */
  | { kind: 'http'; status: number }
  /** No answer at all: DNS, a refused or dropped connection, a timeout. */
  | { kind: 'unreachable'; detail: string };

/**
 * The colloquy error for a failed call, by the policy in the table above. `call` names what
 * was attempted (`chat.postMessage`, `a message in 290926798999357250`); `options.cause` must
 * already be redacted (the library's error can hold the token).
 *
 * @example
 * ```ts
 * platformError('telegram', 'sendMessage', { kind: 'rate-limited', retryAfterMs: 30_000 }, { cause });
 * // RateLimitError { code: 'rate_limited', transient: true, retryAfterMs: 30000 }
 * ```
 */
export function platformError(
  platform: string,
  call: string,
  failure: PlatformFailure,
  options: { cause?: unknown; conversationId?: string; messageId?: string } = {},
): ColloquyError {
  const name = platform.charAt(0).toUpperCase() + platform.slice(1); // 'slack' → 'Slack'
  switch (failure.kind) {
    case 'refused': {
      const message = `${name} refused ${call}: ${failure.detail ?? failure.code}`;
      return new PlatformError(platform, message, {
        ...options,
        code: failure.code,
        transient: false,
      });
    }
    case 'rate-limited': {
      const wait =
        failure.retryAfterMs === undefined ? '' : ` (retry after ${failure.retryAfterMs / 1000} s)`;
      return new RateLimitError(platform, `${name} rate-limited ${call}${wait}`, {
        ...options,
        ...(failure.retryAfterMs !== undefined && { retryAfterMs: failure.retryAfterMs }),
      });
    }
    case 'http':
      return new PlatformError(platform, `${name} answered ${call} with HTTP ${failure.status}`, {
        ...options,
        code: `http_${failure.status}`,
        transient: failure.status >= 500,
      });
    case 'unreachable':
      return new NetworkError(`Could not reach ${name} for ${call}: ${failure.detail}`, options);
  }
}

/** What posting one part gave back: the platform's id for it, and when it was posted. */
export interface PostedPart {
  /** Undefined when the platform answered without one (the part is then left out of the ids). */
  id: string | undefined;
  /** ISO 8601 UTC. */
  timestamp?: string;
}

/**
 * Posts the parts of one reply in order and collects their platform ids; after each part but
 * the last, `partPosted` (awaited) gets the ids so far: when a later part fails (the error
 * from `fail` is thrown), the runtime knows what did go out and stores it as the (partial)
 * reply. The timestamp is the first part's. The first `skipParts` parts are not posted (they
 * went out before a crash); `post` gets each part's index in the whole reply.
 *
 * @example
 * ```ts
 * const sent = await sendParts(bodies, postOne, (error, index) => toColloquyError(error, index));
 * // { messageIds: ['1', '2'], timestamp: '2026-03-11T10:00:00.000Z' }
 * ```
 */
export async function sendParts<Part>(
  parts: readonly Part[],
  post: (part: Part, index: number) => Promise<PostedPart>,
  fail: (error: unknown, index: number) => ColloquyError,
  { partPosted, skipParts = 0 }: SendOptions = {},
): Promise<SentMessage> {
  const messageIds: string[] = [];
  let timestamp: string | undefined;
  for (const [index, part] of parts.entries()) {
    if (index < skipParts) continue;
    let posted: PostedPart;
    try {
      posted = await post(part, index);
    } catch (error) {
      throw fail(error, index);
    }
    if (posted.id !== undefined) messageIds.push(posted.id);
    if (index === skipParts) timestamp = posted.timestamp;
    if (index < parts.length - 1) await partPosted?.([...messageIds]);
  }
  return timestamp === undefined ? { messageIds } : { messageIds, timestamp };
}

/**
 * System error codes that mean no connection was made, so the request never reached the
 * platform: a name that did not resolve, a refused or unreachable address, a connect timeout.
 */
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * True when a failed request provably never reached the platform (see `NOT_CONNECTED`), read
 * from the error and the errors it wraps (`cause`, grammy's `error`, Slack's `original`). Any
 * other failure (a reset, a timeout, an answer cut off) may come after the platform acted on
 * the request: a post is then not sent again, it is recorded `unconfirmed`.
 *
 * @example
 * ```ts
 * neverSent(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })); // true
 * neverSent(new TypeError('fetch failed', { cause: { code: 'UND_ERR_SOCKET' } })); // false
 * ```
 */
export function neverSent(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const failed = current as {
      code?: unknown;
      cause?: unknown;
      error?: unknown;
      original?: unknown;
    };
    if (typeof failed.code === 'string' && NOT_CONNECTED.has(failed.code)) return true;
    current = failed.cause ?? failed.error ?? failed.original;
  }
  return false;
}
