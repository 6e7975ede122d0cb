import type { BotIdentity, Channel } from './channel.js';
import type { Logger } from './logger.js';
import type { ConversationStore } from './store.js';
import type { NewMessage, Participant } from './types.js';

/**
 * The one primitive of the pipeline: an interceptor gets the turn's context and a `next`
 * that runs the rest of the chain.
 *
 * The chains, in both directions (docs/chain.md has the picture):
 * - inbound, once a turn is committed and acknowledged (capture, where repeated deliveries are
 *   found stored by their unique keys), in its conversation's order:
 *   `inboundChain(userInterceptors, loopGuard, dispatch)`;
 * - outbound, for every reply: `outboundChain(sendHooks, outbox)`, where the outbox records the
 *   reply `sending`, posts it and confirms it `sent`.
 *
 * @example
 * ```ts
 * const logTurns: Interceptor = async (ctx, next) => {
 *   console.log(ctx.message.participant.displayName, ctx.message.content);
 *   await next();
 * };
 * ```
 */
export type Next = () => Promise<void>;
export type Interceptor<C = unknown> = (ctx: C, next: Next) => Promise<void>;

/** Composes interceptors into one; each may call `next()` at most once. */
export function compose<C>(interceptors: readonly Interceptor<C>[]): Interceptor<C> {
  return (ctx, last) => {
    let called = -1;
    const dispatch = async (index: number): Promise<void> => {
      if (index <= called) throw new Error('next() called more than once in one interceptor');
      called = index;
      const interceptor = interceptors[index];
      if (interceptor === undefined) return last();
      await interceptor(ctx, () => dispatch(index + 1));
    };
    return dispatch(0);
  };
}

/**
 * What every interceptor sees for one inbound turn. Interceptors may add fields; declare them
 * by widening the context type (`Interceptor<TurnContext & { locale: string }>`).
 */
export interface TurnContext {
  /** The inbound turn, as the channel parsed it. */
  readonly message: NewMessage;
  /** The channel it came through. */
  readonly channel: Channel;
  readonly store: ConversationStore;
  /**
   * Posts a reply in place (same thread, as a reply where the platform has them) as `from`,
   * through the outbox (recorded before the platform call, confirmed after), and returns the
   * outbound turn with the platform's message id once the platform took it. The confirmation
   * commits behind: the turn is handled (and `bot.idle()` resolves) once it has.
   */
  readonly send: (content: string, from: Participant) => Promise<NewMessage>;
  /**
   * Adds the bot's reaction to the turn (`'👀'`) through its channel, recorded in
   * `message_reactions`; absent when the channel cannot react.
   */
  readonly react?: (emoji: string) => Promise<void>;
  /** How many agent turns in a row led to this one (0 for a person's turn). Loop guards read it. */
  readonly depth: number;
  /** Our identities on every started channel, for alias resolution. */
  readonly identities: readonly BotIdentity[];
}

/**
 * Wraps every reply on its way to the platform, as grammY's API transformers wrap its calls.
 * A hook gets the reply turn before it is recorded, and `send`, which records it, posts it and
 * resolves with it as sent (the platform's ids in its metadata). It may change the turn (its
 * content or metadata, not its id or conversation) before passing it on, look at what was
 * sent, or refuse to send by throwing: then nothing is recorded or posted, and the agent's
 * run fails with that error. Hooks run in order, the first outermost. A post the bot starts
 * (`bot.send`, a scheduled post, an agent's follow-up; `reply.metadata.origin === 'post'`)
 * passes them too, with no `about.inbound`; one a hook refuses is not sent (its post fails).
 *
 * @example
 * ```ts
 * const noEmails: SendHook = (reply, send) =>
 *   send({ ...reply, content: reply.content.replace(/\S+@\S+/g, '[email]') });
 * new Bot({ channels, agents, sendHooks: [noEmails] });
 * ```
 */
export type SendHook = (
  reply: NewMessage,
  send: (reply: NewMessage) => Promise<NewMessage>,
  about: { readonly inbound?: NewMessage; readonly channel: Channel },
) => Promise<NewMessage>;

/**
 * The inbound chain a committed turn passes: the user's interceptors, in order, then the loop
 * guard, then dispatch (which runs the agents the turn concerns).
 *
 * @example
 * ```ts
 * await inboundChain(interceptors, loopGuard(5, logger), dispatch)(ctx, async () => {});
 * ```
 */
export function inboundChain(
  interceptors: readonly Interceptor<TurnContext>[],
  guard: Interceptor<TurnContext>,
  dispatch: Interceptor<TurnContext>,
): Interceptor<TurnContext> {
  return compose([...interceptors, guard, dispatch]);
}

/**
 * The loop guard: an agent's turn `maxAgentDepth` agent turns deep goes no further (no agent
 * answers it), with one warning.
 *
 * @example
 * ```ts
 * const guard = loopGuard(5, consoleLogger);
 * ```
 */
export function loopGuard(maxAgentDepth: number, logger: Logger): Interceptor<TurnContext> {
  return async (ctx, next) => {
    const { message, depth } = ctx;
    if (message.participant.kind !== 'agent' || depth < maxAgentDepth) return next();
    logger.warn('loop guard: not answering, too many agent turns in a row', {
      conversationId: message.conversationId,
      messageId: message.id,
      depth,
      maxAgentDepth,
    });
  };
}

/**
 * The outbound chain a reply passes: the send hooks, in order, the first outermost, then
 * `outbox`, which records the reply as the hooks left it (`sending`), posts it and confirms it
 * (`sent`). A hook that throws stops the reply before anything is recorded.
 *
 * @example
 * ```ts
 * const sent = await outboundChain(bot.sendHooks, outbox, { inbound, channel })(reply);
 * ```
 */
export function outboundChain(
  hooks: readonly SendHook[],
  outbox: (reply: NewMessage) => Promise<NewMessage>,
  about: Parameters<SendHook>[2],
): (reply: NewMessage) => Promise<NewMessage> {
  return hooks.reduceRight<(reply: NewMessage) => Promise<NewMessage>>(
    (next, hook) => async (reply) => hook(reply, next, about),
    async (reply) => outbox(reply),
  );
}
