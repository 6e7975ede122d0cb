/**
 * A reply streamed by posting a message and editing it as the answer grows, the way every
 * platform without a native streaming call shows one: the channel says how its text becomes
 * message parts and how to post and edit one; this paces the edits, backs off when the
 * platform rate-limits them, never sends an edit that changes nothing, has the text of each
 * change recorded before it is sent, and continues a long answer in a next message at the
 * boundary the channel's own splitter chose.
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
 * longer fits one, and has the text of each post and edit recorded (`options.showing`) before
 * it is sent.
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
  const { pause, wake } = pauses();
  const ids = () => shown.flatMap((part) => (part.id === undefined ? [] : [part.id]));

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
          await options.showing?.({ messageIds: ids(), shown: text });
          await attempt(async () => {
            const posted = await platform.post(part, index);
            if (index === 0) timestamp = posted.timestamp;
            shown[index] = { id: posted.id, text: want, editedAt: Date.now() };
          }, index);
        } else if (had.text.trimEnd() !== want.trimEnd() && had.id !== undefined) {
          const wait = had.editedAt + platform.editEveryMs - Date.now();
          if (!final && wait > 0) await pause(wait);
          if (latest !== text && !final) break; // newer words came: edit with those
          await options.showing?.({ messageIds: ids(), shown: text });
          await attempt(() => platform.edit(had.id!, part, index), index);
          shown[index] = { id: had.id, text: want, editedAt: Date.now() };
        }
      }
      if (latest === text) {
        options.progress?.({ messageIds: ids(), shown: text });
        return;
      }
    }
  };
  const catching = catchUps(catchUp);

  return {
    update(text) {
      if (final) return;
      latest = text;
      catching.kick();
    },
    async end(text) {
      final = true;
      latest = text;
      wake();
      await catching.settled();
      catching.kick();
      await catching.settled();
      catching.rethrow();
      const sent: SentMessage = { messageIds: ids() };
      return timestamp === undefined ? sent : { ...sent, timestamp };
    },
  };
}

/**
 * One catch-up at a time: `kick()` starts `catchUp` unless one is running (it picks the newest
 * text up) or one failed; `settled()` resolves once none is running; `rethrow()` throws what
 * the failed one threw.
 *
 * @example
 * ```ts
 * const catching = catchUps(async () => { while (shown !== latest) await show(latest); });
 * catching.kick();
 * await catching.settled();
 * catching.rethrow();
 * ```
 */
export function catchUps(catchUp: () => Promise<void>): {
  kick(): void;
  settled(): Promise<void>;
  readonly failed: boolean;
  rethrow(): void;
} {
  let running: Promise<void> | undefined;
  let failure: { error: unknown } | undefined;
  return {
    kick() {
      if (failure !== undefined || running !== undefined) return;
      running = catchUp()
        .catch((error: unknown) => {
          failure = { error };
        })
        .finally(() => (running = undefined));
    },
    async settled() {
      while (running !== undefined) await running;
    },
    get failed() {
      return failure !== undefined;
    },
    rethrow() {
      if (failure !== undefined) throw failure.error;
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
