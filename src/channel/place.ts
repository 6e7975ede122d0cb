import type { Channel } from '../channel.js';

/**
 * The channel of type `type` that `conversationId` belongs to: the one whose `placeOf` knows
 * it, else (a channel that cannot tell) the first of that type.
 *
 * @example
 * ```ts
 * channelOf([workspaceOne, workspaceTwo], 'slack', 'slack:T0TWO:C0GENERAL'); // workspaceTwo
 * ```
 */
export function channelOf(
  channels: readonly Channel[],
  type: string,
  conversationId: string,
): Channel | undefined {
  const ofType = channels.filter((c) => c.type === type);
  return ofType.find((c) => c.placeOf?.(conversationId) !== undefined) ?? ofType[0];
}
