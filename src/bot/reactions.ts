import type { Delivery } from '../channel.js';
import type { Logger } from '../logger.js';
import type { ReactionChange } from '../reactions.js';
import type { ConversationStore } from '../store.js';

/**
 * A reaction a channel saw, recorded in the bot's store (a reaction is not a turn: no agent
 * runs). One on a message the store does not know (posted before the bot ran) is left out
 * with one log line. Rejects with the store's error when it could not be written, so the
 * platform delivers the event again.
 *
 * @example
 * ```ts
 * reaction: (change) => captureReaction(store, change, logger),
 * ```
 */
export async function captureReaction(
  store: ConversationStore | undefined,
  change: ReactionChange,
  logger: Logger,
): Promise<Delivery> {
  const known = (await store?.recordReaction?.(change)) ?? true;
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
