/**
 * Reactions in FakeTelegram: the `message_reaction` update a person's reaction makes, sent
 * only to a bot that asked for it in `allowed_updates` (Telegram's default leaves it out).
 */
import type { Chat, MessageReactionUpdated, Update, User } from 'grammy/types';

/**
 * A person changes their reactions on a message: `emoji` is what they leave on it (empty:
 * none), `before` what was there (default none).
 *
 * @example
 * ```ts
 * telegram.react({ chat, from: ada, messageId: 7, emoji: ['👎'], before: ['👍'] });
 * ```
 */
export interface FakeTelegramReaction {
  chat: Chat;
  from: User;
  messageId: number;
  emoji: string[];
  before?: string[];
}

/** Telegram's update types when a bot names none: all but these. */
const OPT_IN = ['message_reaction', 'message_reaction_count', 'chat_member'];

/** The `message_reaction` of a person's reaction, dated `date` (unix seconds). */
export function reactionUpdate(reaction: FakeTelegramReaction, date: number): Partial<Update> {
  const emoji = (list: string[]) => list.map((e) => ({ type: 'emoji' as const, emoji: e }));
  const update = {
    chat: reaction.chat,
    message_id: reaction.messageId,
    user: reaction.from,
    date,
    old_reaction: emoji(reaction.before ?? []),
    new_reaction: emoji(reaction.emoji),
  } as MessageReactionUpdated;
  return { message_reaction: update };
}

/**
 * Whether Telegram sends an update of this type to a bot that asked for `allowed` (the last
 * `allowed_updates` it gave; undefined or empty: the default).
 */
export function isAllowed(update: object, allowed: readonly string[] | undefined): boolean {
  const type = Object.keys(update).find((key) => key !== 'update_id') ?? '';
  return allowed === undefined || allowed.length === 0
    ? !OPT_IN.includes(type)
    : allowed.includes(type);
}
