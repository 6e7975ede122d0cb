import type { BotIdentity, Channel } from './channel.js';
import type { Logger } from './logger.js';
import type { ConversationStore } from './store.js';
import type { NewMessage, Participant } from './types.js';

/**
 * The one primitive of the pipeline: an interceptor gets the turn's context and a `next`
 * that runs the rest of the chain.
 *
 * Every link a turn passes is listed here, in order, once each way (docs/chain.md has the
 * picture): `inboundChain` (capture, then the user's interceptors, the interactions link, the
 * loop guard and dispatch) and `outboundChain` (the send hooks, then the outbox).
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
 * A hook gets the reply turn before it is recorded (a streamed reply: its final text, once its
 * words were shown; see `outboundChain`), and `send`, which records it, posts it and
 * resolves with it as sent (the platform's ids in its metadata). It may change the turn (its
 * content or metadata, not its id or conversation) before passing it on, look at what was
 * sent, or refuse to send by throwing: then nothing is recorded or posted (of a streamed
 * reply, what was shown stays), and the agent's run fails with that error. Hooks run in order, the first outermost. A post the bot starts
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
 * The inbound chain, every link in order:
 * 1. `captureLink`, as the turn arrives: it commits the turn with its pending runs and
 *    acknowledges it; its `next` is `queue`, which hands the turn on to its conversation's
 *    queue (`agent_runs`, drained by `src/bot/drain.ts`);
 * 2. from that queue, one turn at a time per conversation: the user's interceptors, in order,
 *    so that they see (and may stop) every turn, commands and button presses too;
 * 3. the interactions link (`interactionsInterceptor`): a refused interaction is answered with
 *    its one line and a command with a handler by the handler, and neither goes further;
 * 4. the loop guard (`loopGuard`);
 * 5. dispatch, which runs the agents the turn concerns.
 *
 * A turn resumed from `agent_runs` (start-up recovery, the shared sweep, a lease take-over)
 * was captured before: it enters at 2 (`queued`).
 *
 * @example
 * ```ts
 * const delivered = inboundChain.arriving(queue)(arriving); // intake, as the turn arrives
 * const links = { interactions, maxAgentDepth: 5, logger };
 * await inboundChain.queued(interceptors, links, dispatch)(ctx, done);
 * ```
 */
export const inboundChain = {
  arriving:
    (queue: (arriving: Arriving) => Promise<void>) =>
    (arriving: Arriving): Promise<void> =>
      compose([captureLink])(arriving, () => queue(arriving)),
  queued: (
    interceptors: readonly Interceptor<TurnContext>[],
    links: { interactions: Interceptor<TurnContext>; maxAgentDepth: number; logger: Logger },
    dispatch: Interceptor<TurnContext>,
  ): Interceptor<TurnContext> =>
    compose([
      ...interceptors,
      links.interactions,
      loopGuard(links.maxAgentDepth, links.logger),
      dispatch,
    ]),
};

/**
 * A new inbound turn as it arrives: what the capture link gets. The bot's intake
 * (`src/bot/intake.ts`) makes its writes and answers its delivery.
 */
export interface Arriving<Tried = unknown> {
  readonly turn: NewMessage;
  /**
   * Hands the turn to capture with its pending runs (`agent_runs`), one commit most of the
   * time. `tried`: what became of the first try; `committed`: whether the turn is committed in
   * the end (capture retries a passing failure), false when the bot stops first or capture
   * gives up on it.
   */
  commit(): { tried: Promise<Tried>; committed: Promise<boolean> };
  /**
   * Answers the channel's delivery as `tried` says: acknowledged when the turn is committed or
   * found stored, refused when not (the platform delivers it again). Settles once answered.
   */
  acknowledge(tried: Tried): Promise<void>;
}

/**
 * The capture link, the inbound chain's first: it commits the turn with its pending runs,
 * acknowledges the delivery, and only then calls `next`. A delivery of a turn the store has
 * already is found by its unique keys (same id, same platform message) and stores nothing new:
 * that is the dedupe. A turn refused at the first try goes on once capture commits it; one
 * never committed here goes no further (a restart resumes its runs, the dead-letter file
 * keeps it).
 */
export const captureLink: Interceptor<Arriving> = async (arriving, next) => {
  const { tried, committed } = arriving.commit();
  await arriving.acknowledge(await tried);
  if (await committed) await next();
};

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
 * The outbound chain a reply passes, every link in order: the send hooks, the first outermost,
 * then the outbox, the innermost link, which records the reply as the hooks left it
 * (`sending`), posts it and confirms it (`sent`). The outbox comes last so that a hook that
 * changes a whole reply (masks an e-mail address) runs before anything is recorded: the record
 * and its text revisions hold what was posted, never what a hook removed. A streamed reply's
 * words are shown and recorded as the model writes them; only its final text passes the hooks
 * (an agent whose hooks must see or refuse every word first sets `stream = false`). A hook that
 * throws stops a whole reply before anything is recorded; on a streamed reply it fails the run,
 * and what was shown stays, recorded `sent`.
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
  // The outbox ends the chain: it has no `send` to call.
  const links: readonly SendHook[] = [...hooks, (reply) => outbox(reply)];
  const from =
    (index: number) =>
    (reply: NewMessage): Promise<NewMessage> =>
      links[index]!(reply, from(index + 1), about);
  return from(0);
}
