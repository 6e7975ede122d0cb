import type { Interceptor } from './chain.js';
import type { TurnContext } from './context.js';
import type { CaptureWriter } from './capture.js';
import type { NewMessage } from './types.js';

/** The turn of the parts that went out, for an error a failed `ctx.send` threw. */
const partialReplies = new WeakMap<object, NewMessage>();

/**
 * Marks an error thrown by `ctx.send` as a reply that went out in part: `turn` holds the
 * platform ids that did go out. Capture stores it before the error travels on. Returns the
 * error, to throw.
 *
 * @example
 * ```ts
 * throw withPartialReply(error, { ...turn, metadata: { ...turn.metadata, partial: true } });
 * ```
 */
export function withPartialReply<E>(error: E, turn: NewMessage): E {
  if (typeof error === 'object' && error !== null) partialReplies.set(error, turn);
  return error;
}

/**
 * Stores every reply sent through `ctx.send` with the platform's message id — and, when a
 * split reply failed part way, the parts that did go out (marked by {@link withPartialReply})
 * before the error is thrown on. For a turn that is itself already stored. The write is
 * queued on the writer, in order, and `ctx.send` does not wait for it.
 *
 * @example
 * ```ts
 * const chain = compose<TurnContext>([captureReplies(writer), dispatch]);
 * ```
 */
export function captureReplies(writer: CaptureWriter): Interceptor<TurnContext> {
  return async (ctx, next) => {
    const send = ctx.send.bind(ctx);
    ctx.send = async (content, from) => {
      let sent: NewMessage;
      try {
        sent = await send(content, from);
      } catch (error) {
        const partial = typeof error === 'object' && error !== null && partialReplies.get(error);
        if (partial) void writer.append(partial);
        throw error;
      }
      // Queued, not waited for: the turn does not wait for the disk; reads that must see the
      // reply wait for `writer.settled()` (the Bot's agents read through such a view).
      void writer.append(sent);
      return sent;
    };
    await next();
  };
}

/**
 * The first link of every chain: queues the inbound turn for the store before anything else
 * runs, stops a turn the store already had or is still writing (a platform retry must not be
 * answered twice; see {@link CaptureWriter.accept}), and stores every reply sent through
 * `ctx.send` with the platform's message id (see {@link captureReplies}). The turn does not
 * wait for the disk: reads that must see it wait for `writer.settled()`. While the store is
 * failing a turn cannot be recognised as a retry and the chain goes on: answering twice is
 * preferred to not answering.
 *
 * @example
 * ```ts
 * const chain = compose<TurnContext>([captureInterceptor(writer), ...userInterceptors, dispatch]);
 * await chain(ctx, async () => {});
 * ```
 */
export function captureInterceptor(writer: CaptureWriter): Interceptor<TurnContext> {
  const replies = captureReplies(writer);
  return async (ctx, next) => {
    if ((await writer.accept(ctx.message)) === 'duplicate') return;
    await replies(ctx, next);
  };
}
