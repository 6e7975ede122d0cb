import type { Delivery } from '../channel.js';
import type { ReactionChange } from '../reactions.js';
import type { Running } from './running.js';

/**
 * A reaction a channel saw, recorded in the bot's store (a reaction is not a turn: no agent
 * runs). A message the store does not find is looked for again once what capture holds is
 * committed (a reply's confirmation, with its platform id, may be on its way); one still
 * unknown (posted before the bot ran) is left out with one log line. Rejects with the store's
 * error when it could not be written, so the platform delivers the event again.
 *
 * @example
 * ```ts
 * reaction: (change) => captureReaction(bot, change),
 * ```
 */
export async function captureReaction(
  bot: Pick<Running, 'store' | 'capture' | 'logger'>,
  change: ReactionChange,
): Promise<Delivery> {
  const { store, capture, logger } = bot;
  if (store.recordReaction === undefined) return { handled: Promise.resolve() };
  let known = await store.recordReaction(change);
  if (!known) {
    await capture.settled();
    known = await store.recordReaction(change);
  }
  if (!known) {
    const where = `${change.channelType}:${change.channelId}:${change.messageId}`;
    logger.info(
      `not recorded: reaction ${change.reaction} on a message the store does not have (${where})`,
      {
        channelType: change.channelType,
      },
    );
  }
  return { handled: Promise.resolve() };
}
