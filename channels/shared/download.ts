/**
 * How every platform channel fetches a file's bytes (`Channel.fetchAttachment`): one HTTP GET,
 * its body read into memory, never past `maxBytes` (a `Content-Length` over it is not read at
 * all; a body that grows past it is cancelled), within `timeoutMs`. Nothing is written to disk.
 * A refusal (an HTTP error, a redirect the channel does not follow) is a `PlatformError`, no
 * answer in time a `NetworkError`, a file too large an `AttachmentTooLargeError`.
 *
 * @example
 * ```ts
 * const file = await download('discord', attachment.url!, { maxBytes: 1_048_576 }, { what: 'r.png' });
 * ```
 */
import type {
  AttachmentFetchOptions,
  FetchedAttachment,
  MessageAttachment,
} from '../../src/attachments.js';
import { formatBytes } from '../../src/attachments.js';
import { AttachmentTooLargeError } from '../../src/errors.js';
import { redactError } from '../../src/logger.js';
import { platformError } from './platform.js';

/**
 * Throws `AttachmentTooLargeError` when the platform said `file` is larger than
 * `options.maxBytes` (so it is not fetched at all), and names the file for errors.
 *
 * @example
 * ```ts
 * const what = checkDeclaredSize('slack', { kind: 'file', name: 'a.zip', size: 9e9 }, { maxBytes: 1024 }); // throws
 * ```
 */
export function checkDeclaredSize(
  platform: string,
  file: MessageAttachment,
  options: AttachmentFetchOptions,
): string {
  const what = file.name ?? file.platformFileId ?? 'file';
  if (file.size !== undefined && file.size > options.maxBytes)
    throw tooLarge(platform, what, options);
  return what;
}

function tooLarge(platform: string, what: string, options: AttachmentFetchOptions) {
  return new AttachmentTooLargeError(
    platform,
    `the file ${what} is over ${formatBytes(options.maxBytes)}; it was not read`,
    { maxBytes: options.maxBytes },
  );
}

/** How long one fetch may take when the caller does not say. */
export const DEFAULT_DOWNLOAD_TIMEOUT_MS = 10_000;

/** What a channel adds to a download: headers, whether to follow redirects, how to name it. */
export interface DownloadRequest {
  /** Names the file in errors (its name, or its id). */
  what: string;
  headers?: Record<string, string>;
  /** `manual`: a redirect is a refusal (Slack sends a bad token to its sign-in page). */
  redirect?: 'follow' | 'manual';
}

/**
 * GETs `url` and reads its body, at most `options.maxBytes` of it.
 *
 * @example
 * ```ts
 * const { bytes } = await download('slack', url, { maxBytes: 65_536 }, {
 *   what: 'notes.txt', headers: { authorization: `Bearer ${token}` }, redirect: 'manual',
 * });
 * ```
 */
export async function download(
  platform: string,
  url: string,
  options: AttachmentFetchOptions,
  request: DownloadRequest,
): Promise<FetchedAttachment> {
  const call = `the file ${request.what}`;
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_DOWNLOAD_TIMEOUT_MS);
  const signal =
    options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  // The caller's own abort stays what it is; anything else is "no answer".
  const fail = (cause: unknown): unknown =>
    options.signal?.aborted === true
      ? cause
      : platformError(
          platform,
          call,
          { kind: 'unreachable', detail: timeout.aborted ? 'timed out' : describe(cause) },
          { cause: redactError(cause) },
        );
  let response: Response;
  try {
    response = await fetch(url, {
      headers: request.headers ?? {},
      redirect: request.redirect ?? 'follow',
      signal,
    });
  } catch (cause) {
    throw fail(cause);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    const redirected = response.status >= 300 && response.status < 400;
    throw platformError(
      platform,
      call,
      redirected
        ? { kind: 'refused', code: `http_${response.status}`, detail: 'redirected (no access)' }
        : { kind: 'http', status: response.status },
    );
  }
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > options.maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge(platform, request.what, options);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    if (response.body !== null) {
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > options.maxBytes) {
          await reader.cancel().catch(() => undefined);
          throw tooLarge(platform, request.what, options);
        }
        chunks.push(value);
      }
    }
  } catch (cause) {
    if (cause instanceof AttachmentTooLargeError) throw cause;
    throw fail(cause);
  }
  const bytes = Buffer.concat(chunks, size);
  const type = response.headers.get('content-type')?.split(';')[0]?.trim();
  return type === undefined || type === '' ? { bytes } : { bytes, mimeType: type };
}

function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : '';
  return `${cause.message}${inner}`;
}

/**
 * A URL's origin (`https://cdn.discordapp.com`), or `undefined` for a string that is no URL.
 *
 * @example
 * ```ts
 * originOf('https://files.slack.com/files-pri/T1-F1/a.png'); // 'https://files.slack.com'
 * ```
 */
export function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
