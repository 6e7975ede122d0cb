/**
 * Reactions on Slack: a `reaction_added` / `reaction_removed` event on a message as colloquy
 * records it (the reaction by its name: `+1`, `thumbsdown`, a custom emoji's name). Reactions
 * on files and file comments are not on a turn and are left out.
 *
 * @example
 * ```ts
 * const change = slackReaction(body); // { channelType: 'slack', channelId: 'C1', messageId: ts, … }
 * ```
 */
import type { ReactionChange } from '../../src/reactions.js';
import { slackParticipantId, slackTsToIso } from './parse.js';

/**
 * The change an Events API body says, or undefined when it is no reaction on a message.
 *
 * @example
 * ```ts
 * slackReaction({ event: { type: 'reaction_removed', user: 'U1', reaction: '+1',
 *   item: { type: 'message', channel: 'C1', ts: '1.2' }, event_ts: '3.4' } })?.removed; // true
 * ```
 */
export function slackReaction(body: unknown): ReactionChange | undefined {
  const event = (body as { event?: Record<string, unknown> } | undefined)?.event;
  if (event?.type !== 'reaction_added' && event?.type !== 'reaction_removed') return undefined;
  const item = event.item as { type?: unknown; channel?: unknown; ts?: unknown } | undefined;
  const { user, reaction, event_ts: eventTs } = event;
  if (
    item?.type !== 'message' ||
    typeof item.channel !== 'string' ||
    typeof item.ts !== 'string' ||
    typeof user !== 'string' ||
    typeof reaction !== 'string'
  ) {
    return undefined;
  }
  return {
    channelType: 'slack',
    channelId: item.channel,
    messageId: item.ts,
    participantId: slackParticipantId(user),
    reaction,
    at: slackTsToIso(typeof eventTs === 'string' ? eventTs : item.ts),
    ...(event.type === 'reaction_removed' && { removed: true }),
  };
}
