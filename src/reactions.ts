import type { Channel } from './channel.js';
import { channelOf } from './channel/place.js';
import { ColloquyError } from './errors.js';
import { isBefore } from './timestamp.js';
import type { ConversationStore, StoreOperation } from './store.js';
import type { NewMessage, PlatformMessageRef } from './types.js';
import { isoTimestamp } from './types.js';

/**
 * Someone added or removed a reaction on a message: the message by its platform ids (as an
 * edit names it), who, which reaction (an emoji, or a custom emoji's name) and when. A change
 * from one reaction to another is a removal of the first and an addition of the second.
 *
 * @example
 * ```ts
 * const thumbsDown: ReactionChange = {
 *   channelType: 'slack', channelId: 'C0GENERAL', messageId: '1700000000.000200',
 *   participantId: 'slack:U0ALICE', reaction: 'thumbsdown', at: '2026-03-10T15:02:00.000Z',
 * };
 * ```
 */
export interface ReactionChange extends PlatformMessageRef {
  participantId: string;
  reaction: string;
  /** ISO 8601 UTC: when it was added, or removed. */
  at: string;
  /** True when the reaction was taken back. */
  removed?: boolean;
  /** The person's name, when the platform gives it with the reaction. */
  displayName?: string;
  /**
   * True when a bot reacted, as the platform says (Telegram and Discord with the reaction, Slack
   * through `users.info` in the change `ChannelHandlers.reaction`'s `complete` gives), or when
   * the channel could not tell (a failed lookup): never answered (`BotOptions.answerReactions`).
   */
  byBot?: boolean;
}

/**
 * A reaction as a store keeps it (one row of `message_reactions`): still there while
 * `removedAt` is absent.
 *
 * @example
 * ```ts
 * const [first] = await store.getReactions('slack:T1:C1', 'slack:T1:C1:1700000000.000200');
 * first?.reaction; // 'thumbsdown'
 * ```
 */
export interface MessageReaction {
  participantId: string;
  reaction: string;
  addedAt: string;
  removedAt?: string;
}

/**
 * The reactions of one message after a change: an addition opens a reaction unless the same
 * person's same reaction is open already, or was removed after the addition's time (a
 * redelivered addition; at equal times the order of arrival decides: Telegram dates reactions
 * in whole seconds, so a reaction put on again within the second of its removal is open); a
 * removal closes the open one unless it was added after the removal's time (none open:
 * nothing changes). Stores that keep reactions beside the turn (memory, Redis) share it.
 *
 * @example
 * ```ts
 * applyReaction([], { ...ref, participantId: 'p', reaction: '👍', at }); // [{ participantId: 'p', reaction: '👍', addedAt: at }]
 * ```
 */
export function applyReaction(
  reactions: readonly MessageReaction[],
  change: ReactionChange,
): MessageReaction[] {
  const same = (r: MessageReaction) =>
    r.participantId === change.participantId && r.reaction === change.reaction;
  const open = reactions.findIndex((r) => same(r) && r.removedAt === undefined);
  if (change.removed !== true) {
    const settled = reactions.some(
      (r) => same(r) && r.removedAt !== undefined && isBefore(change.at, r.removedAt),
    );
    return open >= 0 || settled
      ? [...reactions]
      : [
          ...reactions,
          { participantId: change.participantId, reaction: change.reaction, addedAt: change.at },
        ];
  }
  if (open < 0 || isBefore(change.at, reactions[open]?.addedAt)) return [...reactions];
  return reactions.map((r, i) => (i === open ? { ...r, removedAt: change.at } : r));
}

/**
 * Adds the bot's reaction `emoji` to `message` (a turn the store has, with its platform id)
 * through `channel`, and records it with the bot as participant through `write` (capture's
 * queue, which waits out a passing store failure). Resolves once the record is committed.
 * Throws a `ColloquyError` of one line when the channel cannot react or the turn has no
 * platform id, and what the channel throws when the platform refuses (then nothing is
 * recorded).
 *
 * @example
 * ```ts
 * await reactTo(channel, write, turn, '👀');
 * ```
 */
export async function reactTo(
  channel: Channel,
  write: (op: StoreOperation) => Promise<unknown>,
  message: Pick<NewMessage, 'id' | 'conversationId' | 'metadata'>,
  emoji: string,
): Promise<void> {
  const { channelId, threadId, messageId } = message.metadata;
  const ids = { conversationId: message.conversationId, messageId: message.id };
  if (channel.react === undefined)
    throw new ColloquyError(`cannot react: ${channel.type} has no reactions`, ids);
  if (messageId === undefined)
    throw new ColloquyError(`cannot react: ${message.id} has no platform message id`, ids);
  // The row goes with the platform call: queued through capture the moment the platform has
  // the reaction, under the platform's name for it (Slack's `+1` for 👍), and kept until it
  // is committed. A row written first could name it otherwise, or keep one the platform
  // refused, with no delivery state (a reply's `sending`) to settle that. Only a crash
  // between the platform's answer and the commit leaves a shown reaction without its row.
  const named = await channel.react(
    { channelId, ...(threadId !== undefined && { threadId }), messageId },
    emoji,
  );
  const participantId = channel.botIdentity?.id ?? `${channel.type}:bot`;
  const change: ReactionChange = {
    channelType: channel.type,
    channelId,
    messageId,
    participantId,
    reaction: typeof named === 'string' ? named : emoji,
    at: isoTimestamp(),
  };
  await write({ kind: 'reaction', change });
}

/**
 * `reactTo` for a turn found by its ids, through the channel of `channels` its conversation
 * belongs to (`Channel.placeOf`: a bot in two Slack workspaces reacts through the turn's; two
 * Slack bots in one workspace, through the one the turn came `via`);
 * refuses, in one line, a turn the store does not have or whose channel the bot does not run.
 *
 * @example
 * ```ts
 * await reactToStored(channels, store, write, 'telegram:1001', 'telegram:1001:7', '👍');
 * ```
 */
export async function reactToStored(
  channels: readonly Channel[],
  store: ConversationStore,
  write: (op: StoreOperation) => Promise<unknown>,
  conversationId: string,
  messageId: string,
  emoji: string,
): Promise<void> {
  const message = await store.getMessage(conversationId, messageId);
  if (message === undefined) {
    throw new ColloquyError(`cannot react: no message ${messageId} in ${conversationId}`, {
      conversationId,
      messageId,
    });
  }
  const { channelType, via } = message.metadata;
  const channel = channelOf(channels, channelType, conversationId, via);
  if (channel === undefined) {
    throw new ColloquyError(`cannot react: no ${channelType} channel for ${messageId}`, {
      conversationId,
      messageId,
    });
  }
  await reactTo(channel, write, message, emoji);
}
