import { TELEGRAM_ALLOWED_UPDATES } from './reactions.js';
import type { Api } from 'grammy';
import type { Update } from 'grammy/types';

/** What the polling loop needs from its channel. */
export interface PollingOptions {
  api: Api;
  /** Long-polling timeout in seconds. */
  timeoutSeconds: number;
  /** Most updates fetched at once (Telegram allows 1-100). */
  limit: number;
  /** Resolves once the bot has room for more (bounded intake). */
  room(): Promise<void>;
  /** Hands one update over; resolves once it is committed, rejects when it was not. */
  handle(update: Update): Promise<void>;
  /** A failure that does not stop polling (a batch not committed, getUpdates failing). */
  report(error: unknown, method: string): void;
  signal: AbortSignal;
}

/** Longest wait between two tries after a failure, in ms. */
const MAX_BACKOFF_MS = 30_000;

/**
 * Long polling that never confirms what is not committed. Each batch of `getUpdates` is handed
 * over at once, so its turns share commits, and the next `offset` moves past an update only
 * when it and every update before it is committed: after a failure the batch is fetched again
 * from the first update that was not, later ones included (they are known to the store by then,
 * so the bot does not take them twice). Before each fetch it waits for `room`: while the bot
 * is busy with many turns, updates stay with Telegram instead of in this process.
 *
 * grammY's own `bot.start()` is not used: it runs a batch's updates one after another (one
 * commit each) and confirms the batch even when one of them failed.
 *
 * Resolves when `signal` aborts (after confirming the offset reached, as grammY does) or
 * rejects when Telegram refuses polling for good (401: bad token, 409: another poller).
 *
 * @example
 * ```ts
 * const stop = new AbortController();
 * const polling = pollUpdates({ api: bot.api, timeoutSeconds: 30, limit: 100, room, handle, report, signal: stop.signal });
 * stop.abort();
 * await polling;
 * ```
 */
export async function pollUpdates(options: PollingOptions): Promise<void> {
  const { api, signal } = options;
  let offset: number | undefined;
  let failures = 0;
  while (!signal.aborted) {
    await abortable(options.room(), signal);
    if (signal.aborted) break;
    let updates: Update[];
    try {
      updates = await api.getUpdates(
        {
          ...(offset !== undefined && { offset }),
          limit: options.limit,
          timeout: options.timeoutSeconds,
          allowed_updates: TELEGRAM_ALLOWED_UPDATES,
        },
        signal as Parameters<Api['getUpdates']>[1],
      );
    } catch (error) {
      if (signal.aborted) break;
      if (isFatal(error)) throw error;
      options.report(error, 'getUpdates');
      await pause(backoff(++failures), signal);
      continue;
    }
    const results = await Promise.allSettled(updates.map((update) => options.handle(update)));
    const failed = results.findIndex((result) => result.status === 'rejected');
    const next = failed === -1 ? updates.at(-1) : updates[failed];
    if (next !== undefined) offset = next.update_id + (failed === -1 ? 1 : 0);
    if (failed === -1) {
      failures = 0;
      continue;
    }
    options.report((results[failed] as PromiseRejectedResult).reason, 'update handling');
    await pause(backoff(++failures), signal);
  }
  // Tell Telegram what is committed, so a restart does not fetch it again.
  if (offset !== undefined) await api.getUpdates({ offset, limit: 1, timeout: 0 }).catch(() => {});
}

/** 401 (the token was revoked) and 409 (another instance polls or a webhook is set) end polling. */
function isFatal(error: unknown): boolean {
  const code = (error as { error_code?: unknown } | null)?.error_code;
  return code === 401 || code === 409;
}

function backoff(failures: number): number {
  return Math.min(MAX_BACKOFF_MS, 250 * 2 ** Math.min(failures, 10));
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return abortable(new Promise((resolve) => setTimeout(resolve, ms).unref()), signal);
}

/** `promise`, or nothing once `signal` aborts. */
function abortable(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = () => resolve();
    signal.addEventListener('abort', done, { once: true });
    promise.then(
      () => (signal.removeEventListener('abort', done), resolve()),
      (error: unknown) => (signal.removeEventListener('abort', done), reject(error)),
    );
  });
}
