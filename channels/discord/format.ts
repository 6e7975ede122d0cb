import { DiscordAPIError, HTTPError, RateLimitError } from 'discord.js';
import type { OutboundMessage } from '../../src/channel.js';
import { ColloquyError, NetworkError, PlatformError } from '../../src/errors.js';
import { redactError, redactText } from '../../src/logger.js';
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

/**
 * Sorts a discord.js failure into colloquy's errors: Discord answered and refused
 * (`DiscordAPIError`, with Discord's code: 50013 Missing Permissions, 10003 Unknown Channel…),
 * a rate limit discord.js was told not to wait out, or a server error → `PlatformError`;
 * anything else (refused connection, timeout) → `NetworkError`. The token never reaches the
 * result: the message is redacted and `cause` is a redacted copy ({@link redactError}) of the
 * discord.js error, which carries the request's URL and body.
 *
 * @example
 * ```ts
 * try { await client.rest.post(Routes.channelMessages(channelId), { body }); }
 * catch (error) { throw toColloquyError(error, `Discord refused a message in ${channelId}`); }
 * ```
 */
export function toColloquyError(
  error: unknown,
  message: string,
  context: { conversationId?: string; messageId?: string } = {},
): ColloquyError {
  if (error instanceof ColloquyError) return error;
  const cause = redactError(error);
  const where = { ...context, cause };
  if (error instanceof DiscordAPIError) {
    return new PlatformError('discord', `${message}: ${cause.message} (${error.code})`, {
      ...where,
      code: String(error.code),
    });
  }
  if (error instanceof RateLimitError) {
    return new PlatformError('discord', `${message}: rate limited on ${redactText(error.route)}`, {
      ...where,
      code: 'rate_limited',
    });
  }
  if (error instanceof HTTPError) {
    return new PlatformError('discord', `${message}: HTTP ${error.status}`, {
      ...where,
      code: `http_${error.status}`,
    });
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code === 'TokenInvalid') {
    return new PlatformError('discord', `${message}: the token was refused`, { ...where, code });
  }
  return new NetworkError(`${message}: ${cause.message}`, where);
}
