/**
 * A reply streamed by posting a message and editing it as the answer grows, the way every
 * platform without a native streaming call shows one: the channel says how its text becomes
 * message parts and how to post and edit one; this paces the edits, backs off when the
 * platform rate-limits them, never sends an edit that changes nothing, and continues a long
 * answer in a next message at the boundary the channel's own splitter chose.
 */
import type { ReplyStream, SentMessage, StreamOptions } from '../../src/channel.js';
import type { ColloquyError } from '../../src/errors.js';
import type { PostedPart } from './platform.js';

/** What a channel gives `editedStream`. */
export interface EditedStreamPlatform<Part> {
  /** The whole text as the parts to show (the same split `send` uses); empty ones are skipped. */
  parts(text: string): Part[];
  /** The text of a part, to compare (an edit that changes nothing is not sent). */
  textOf(part: Part): string;
  /** Posts part `index` (the first replies to the turn answered). */
  post(part: Part, index: number): Promise<PostedPart>;
  /** Replaces the text of the posted part `id`. */
  edit(id: string, part: Part, index: number): Promise<void>;
  /** Least time between two edits of one message while the answer is written. */
  editEveryMs: number;
  /** How long a failure asks to wait (a 429's `retry_after`); undefined when it is no rate limit. */
  retryAfterMs(error: unknown): number | undefined;
  /** A failure as the colloquy error `send` throws. */
  fail(error: unknown, index: number): ColloquyError;
}

/** Most times one post or edit is tried again after a rate limit. */
const MAX_RATE_LIMITED = 5;

/**
 * A `ReplyStream` that posts the first words, edits the message as the answer grows (at most
 * once every `editEveryMs`, the final edit at once), starts the next message when the text no
 * longer fits one, and reports each change to `options.progress`.
 *
 * @example
 * ```ts
 * stream(message, options) {
 *   return editedStream({ parts, textOf, post, edit, editEveryMs: 1000, retryAfterMs, fail }, options);
 * }
 * ```
 */
export function editedStream<Part>(
  platform: EditedStreamPlatform<Part>,
  options: StreamOptions = {},
): ReplyStream {
  const shown: { id: string | undefined; text: string; editedAt: number }[] = [];
  let timestamp: string | undefined;
  let latest = '';
  let final = false;
  let failure: ColloquyError | undefined;
  let running: Promise<void> | undefined;
  const { pause, wake } = pauses();

  /** Runs a platform call, waiting out rate limits. */
  const attempt = async (call: () => Promise<void>, index: number) => {
    for (let tries = 0; ; tries++) {
      try {
        return await call();
      } catch (error) {
        const wait = platform.retryAfterMs(error);
        if (wait === undefined || tries >= MAX_RATE_LIMITED) throw platform.fail(error, index);
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  };

  /** Brings the platform to `latest`, part by part, until nothing changed meanwhile. */
  const catchUp = async () => {
    for (;;) {
      const text = latest;
      const parts = platform.parts(text).filter((part) => platform.textOf(part).trim() !== '');
      for (const [index, part] of parts.entries()) {
        const want = platform.textOf(part);
        const had = shown[index];
        if (had === undefined) {
          await attempt(async () => {
            const posted = await platform.post(part, index);
            if (index === 0) timestamp = posted.timestamp;
            shown[index] = { id: posted.id, text: want, editedAt: Date.now() };
          }, index);
        } else if (had.text.trimEnd() !== want.trimEnd() && had.id !== undefined) {
          const wait = had.editedAt + platform.editEveryMs - Date.now();
          if (!final && wait > 0) await pause(wait);
          if (latest !== text && !final) break; // newer words came: edit with those
          await attempt(() => platform.edit(had.id!, part, index), index);
          shown[index] = { id: had.id, text: want, editedAt: Date.now() };
        }
      }
      const ids = shown.flatMap((part) => (part.id === undefined ? [] : [part.id]));
      if (latest === text) {
        options.progress?.({ messageIds: ids, shown: text });
        return;
      }
    }
  };

  /** Starts catching up unless a catch-up is running (it picks the newest text up). */
  const kick = () => {
    if (failure !== undefined || running !== undefined) return;
    running = catchUp()
      .catch((error: unknown) => {
        failure = error as ColloquyError;
      })
      .finally(() => {
        running = undefined;
      });
  };

  return {
    update(text) {
      if (final) return;
      latest = text;
      kick();
    },
    async end(text) {
      final = true;
      latest = text;
      wake();
      while (running !== undefined) await running;
      kick();
      while (running !== undefined) await running;
      if (failure !== undefined) throw failure;
      const messageIds = shown.flatMap((part) => (part.id === undefined ? [] : [part.id]));
      const sent: SentMessage = { messageIds };
      return timestamp === undefined ? sent : { ...sent, timestamp };
    },
  };
}

/**
 * Pauses between two changes of a reply that the final text cuts short: `pause(ms)` waits,
 * `wake()` ends the pause under way (if any) at once.
 *
 * @example
 * ```ts
 * const { pause, wake } = pauses();
 * await pause(1000); // resolves early when end() calls wake()
 * ```
 */
export function pauses(): { pause(ms: number): Promise<void>; wake(): void } {
  let wake: (() => void) | undefined;
  return {
    pause: (ms) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      }).finally(() => (wake = undefined)),
    wake: () => wake?.(),
  };
}
