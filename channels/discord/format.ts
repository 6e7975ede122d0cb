import type { OutboundMessage } from '../../src/channel.js';
import { splitMessage } from '../../src/split.js';

/** Discord's limit on a message's `content`, in UTF-16 code units. */
export const DISCORD_MESSAGE_LIMIT = 2000;

/** Who a message may ping (Discord's `allowed_mentions`). */
export interface DiscordAllowedMentions {
  parse?: Array<'users' | 'roles' | 'everyone'>;
  users?: string[];
  roles?: string[];
  replied_user?: boolean;
}

/** The JSON body of `POST /channels/{id}/messages` for one part of a reply. */
export interface DiscordMessageBody {
  content: string;
  message_reference?: { message_id: string; fail_if_not_exists: false };
  allowed_mentions: DiscordAllowedMentions;
}

/**
 * By default a reply may ping the users it names (`<@id>`) and the person it answers, never
 * `@everyone`, `@here` or a role: a model's output should not page a whole server.
 */
export const DEFAULT_ALLOWED_MENTIONS: DiscordAllowedMentions = {
  parse: ['users'],
  replied_user: true,
};

/** Where a reply is posted and the bodies to post there, in order. */
export interface DiscordOutbound {
  /** The channel to post to: the thread for a thread, else the channel (or DM channel). */
  channelId: string;
  bodies: DiscordMessageBody[];
}

/**
 * Turns an outbound turn into Discord message bodies: the text split into parts of at most
 * 2000 characters (at paragraph, line or word boundaries, code fences kept balanced), the
 * first part a reply to the inbound message when there is one, the rest plain messages in the
 * same channel or thread. Blank text gives no bodies (Discord refuses empty messages).
 *
 * @example
 * ```ts
 * const { channelId, bodies } = formatOutbound({
 *   conversationId: 'discord:81384788765712384:41771983423143937',
 *   scope: 'channel',
 *   channelId: '41771983423143937',
 *   replyToMessageId: '1234567890123456789',
 *   content: 'Here you go.',
 * });
 * // bodies[0].message_reference.message_id === '1234567890123456789'
 * ```
 */
export function formatOutbound(
  message: OutboundMessage,
  allowedMentions: DiscordAllowedMentions = DEFAULT_ALLOWED_MENTIONS,
): DiscordOutbound {
  const parts =
    message.content.trim() === '' ? [] : splitMessage(message.content, DISCORD_MESSAGE_LIMIT);
  return {
    channelId: message.threadId ?? message.channelId,
    bodies: parts.map((content, index) => ({
      content,
      ...(index === 0 &&
        message.replyToMessageId !== undefined && {
          message_reference: { message_id: message.replyToMessageId, fail_if_not_exists: false },
        }),
      allowed_mentions: allowedMentions,
    })),
  };
}
