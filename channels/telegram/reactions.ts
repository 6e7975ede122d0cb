/**
 * Reactions on Telegram: the `message_reaction` update as colloquy records it, and the update
 * types the channel asks for (`allowed_updates`): Telegram sends reactions only to a bot that
 * asks, and in groups only to a bot that is an administrator there.
 *
 * @example
 * ```ts
 * const changes = telegramReactions(update.message_reaction); // one removal, one addition
 * ```
 */
import type { MessageReactionUpdated, ReactionType } from 'grammy/types';
import type { ReactionChange } from '../../src/reactions.js';

/**
 * Every update type the channel handles; Telegram leaves `message_reaction` out unless asked.
 * Sent with every `getUpdates` and with `setWebhook`.
 */
export const TELEGRAM_ALLOWED_UPDATES = [
  'message',
  'edited_message',
  'channel_post',
  'edited_channel_post',
  'business_message',
  'edited_business_message',
  'callback_query',
  'message_reaction',
  'stopped_message_generation',
] as const;

/**
 * The changes a `message_reaction` update says: each reaction in `old_reaction` and not in
 * `new_reaction` removed, each new one added. Anonymous reactions (`actor_chat`) are the
 * chat's; a paid reaction is `⭐`. Empty when the update names nobody.
 *
 * @example
 * ```ts
 * telegramReactions({ chat, message_id: 7, user, date, old_reaction: [thumbsUp], new_reaction: [thumbsDown] });
 * // [{ …, reaction: '👍', removed: true }, { …, reaction: '👎' }]
 * ```
 */
export function telegramReactions(update: MessageReactionUpdated): ReactionChange[] {
  const who = update.user?.id ?? update.actor_chat?.id;
  if (who === undefined || typeof update.message_id !== 'number') return [];
  const name = update.user?.first_name ?? update.actor_chat?.title;
  const base = {
    channelType: 'telegram',
    channelId: String(update.chat.id),
    messageId: String(update.message_id),
    participantId: `telegram:${who}`,
    at: new Date(update.date * 1000).toISOString(),
    ...(name !== undefined && { displayName: name }),
    ...(update.user?.is_bot === true && { byBot: true }),
  };
  const before = (update.old_reaction ?? []).map(nameOf);
  const after = (update.new_reaction ?? []).map(nameOf);
  return [
    ...before
      .filter((r) => !after.includes(r))
      .map((reaction) => ({ ...base, reaction, removed: true })),
    ...after.filter((r) => !before.includes(r)).map((reaction) => ({ ...base, reaction })),
  ];
}

function nameOf(reaction: ReactionType): string {
  if (reaction.type === 'emoji') return reaction.emoji;
  if (reaction.type === 'custom_emoji') return `custom:${reaction.custom_emoji_id}`;
  return '⭐';
}
