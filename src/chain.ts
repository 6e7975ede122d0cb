import type { BotIdentity, Channel } from './channel.js';
import type { ConversationStore } from './store.js';
import type { NewMessage, Participant } from './types.js';

/**
 * The one primitive of the pipeline: an interceptor gets the turn's context and a `next`
 * that runs the rest of the chain. Capture, dedupe, loop guards and agent dispatch are all
 * interceptors.
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
 * run fails with that error. Hooks run in order, the first outermost.
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
  about: { readonly inbound: NewMessage; readonly channel: Channel },
) => Promise<NewMessage>;
