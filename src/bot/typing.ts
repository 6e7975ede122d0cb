import type { TurnContext } from '../chain.js';
import type { OutboundMessage, TypingIndicator } from '../channel.js';
import { messageOf } from '../errors.js';
import type { Logger } from '../logger.js';
import { outboundFor } from './turn.js';

/** A sign of life being shown; `stop` takes it down (at most once, never throwing). */
export interface Typing {
  stop(): void;
}

const NONE: Typing = { stop: () => undefined };

/**
 * Shows `indicator` at `place` now and every `indicator.repeatMs` until `stop` is called or
 * `signal` aborts (the bot stops), then clears it. Platform calls go one after another, so a
 * clear never overtakes the show before it; the first failure goes to `failed` (a sign of life
 * is a courtesy: the run goes on without it). A channel without an indicator shows nothing.
 *
 * @example
 * ```ts
 * const typing = startTyping(channel.typing, outboundFor(turn, '', place), signal, warn);
 * try { await agent.run(turn, ctx); } finally { typing.stop(); }
 * ```
 */
export function startTyping(
  indicator: TypingIndicator | undefined,
  place: OutboundMessage,
  signal: AbortSignal,
  failed: (cause: unknown) => void,
): Typing {
  if (indicator === undefined || signal.aborted) return NONE;
  let stopped = false;
  let reported = false;
  let timer: NodeJS.Timeout | undefined;
  let last: Promise<void> = Promise.resolve();
  const call = (what: (place: OutboundMessage) => Promise<void>) => {
    last = last
      .then(() => what.call(indicator, place))
      .catch((cause: unknown) => {
        if (reported) return;
        reported = true;
        failed(cause);
      });
  };
  const tick = () => {
    if (stopped) return;
    call(indicator.show);
    timer = setTimeout(tick, indicator.repeatMs);
    timer.unref();
  };
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearTimeout(timer);
    signal.removeEventListener('abort', stop);
    if (indicator.clear !== undefined) call(indicator.clear);
  };
  signal.addEventListener('abort', stop, { once: true });
  tick();
  return { stop };
}

/**
 * The channel's sign of life where the reply to the turn will go, until stopped; a failure is
 * logged as a warning once.
 *
 * @example
 * ```ts
 * const typing = typingFor(ctx, signal, logger);
 * ```
 */
export function typingFor(
  { message, channel }: Pick<TurnContext, 'message' | 'channel'>,
  signal: AbortSignal,
  logger: Logger,
): Typing {
  const place = outboundFor(message, '', channel.replyPlace?.(message));
  return startTyping(channel.typing, place, signal, (cause) =>
    logger.warn(`could not show that the bot is typing: ${messageOf(cause)}`, {
      conversationId: message.conversationId,
      channelType: channel.type,
    }),
  );
}
