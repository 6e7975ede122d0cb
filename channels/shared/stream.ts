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
  /** A failure of posting or editing part `index`, as the colloquy error `send` throws. */
  fail(error: unknown, index: number, call: 'post' | 'edit'): ColloquyError;
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
  const ids = () => shown.flatMap((part) => (part.id === undefined ? [] : [part.id]));

  /** Runs a platform call, waiting out rate limits. */
  const attempt = async (run: () => Promise<void>, index: number, call: 'post' | 'edit') => {
    for (let tries = 0; ; tries++) {
      try {
        return await run();
      } catch (error) {
        const wait = platform.retryAfterMs(error);
        if (wait === undefined || tries >= MAX_RATE_LIMITED)
          throw platform.fail(error, index, call);
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  };

  /** Brings the platform to the latest text, part by part, until nothing changed meanwhile. */
  const follow = followText(async (followed) => {
    for (;;) {
      const text = followed.latest;
      const parts = platform.parts(text).filter((part) => platform.textOf(part).trim() !== '');
      for (const [index, part] of parts.entries()) {
        const want = platform.textOf(part);
        const had = shown[index];
        if (had === undefined) {
          await options.showing?.({ messageIds: ids(), shown: text });
          await attempt(
            async () => {
              const posted = await platform.post(part, index);
              if (index === 0) timestamp = posted.timestamp;
              shown[index] = { id: posted.id, text: want, editedAt: Date.now() };
            },
            index,
            'post',
          );
        } else if (had.text.trimEnd() !== want.trimEnd() && had.id !== undefined) {
          const wait = had.editedAt + platform.editEveryMs - Date.now();
          if (!followed.final && wait > 0) await followed.pause(wait);
          if (followed.latest !== text && !followed.final) break; // newer words came: edit with those
          await options.showing?.({ messageIds: ids(), shown: text });
          await attempt(() => platform.edit(had.id!, part, index), index, 'edit');
          shown[index] = { id: had.id, text: want, editedAt: Date.now() };
        }
      }
      if (followed.latest === text) {
        options.progress?.({ messageIds: ids(), shown: text });
        return;
      }
    }
  });

  return {
    update: follow.update,
    async end(text) {
      await follow.ending(text);
      follow.catching.kick();
      await follow.catching.settled();
      follow.catching.rethrow();
      const sent: SentMessage = { messageIds: ids() };
      return timestamp === undefined ? sent : { ...sent, timestamp };
    },
  };
}

/** The newest text of a reply being written, as a catch-up reads it. */
export interface FollowedText {
  /** The answer so far (the whole of it once `final`). */
  readonly latest: string;
  /** True once `end` gave the whole answer. */
  readonly final: boolean;
  /** Waits `ms`, or less when the whole answer comes meanwhile. */
  pause(ms: number): Promise<void>;
}

/**
 * The text of a reply being written, followed by `catchUp`: `update` keeps the newest text and
 * starts a catch-up (one at a time, see `catchUps`); `ending` gives the whole answer, ends a
 * pause under way and waits for the catch-up running.
 *
 * @example
 * ```ts
 * const follow = followText(async ({ latest }) => show(latest));
 * follow.update('The order');
 * await follow.ending('The order ships tomorrow.');
 * follow.catching.rethrow();
 * ```
 */
export function followText(catchUp: (followed: FollowedText) => Promise<void>): {
  update(text: string): void;
  ending(text: string): Promise<void>;
  catching: ReturnType<typeof catchUps>;
} {
  const { pause, wake } = pauses();
  const followed = { latest: '', final: false, pause };
  const catching = catchUps(() => catchUp(followed));
  return {
    update(text) {
      if (followed.final) return;
      followed.latest = text;
      catching.kick();
    },
    async ending(text) {
      followed.final = true;
      followed.latest = text;
      wake();
      await catching.settled();
    },
    catching,
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
