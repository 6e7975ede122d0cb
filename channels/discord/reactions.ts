/**
 * Reactions on Discord: MESSAGE_REACTION_ADD / MESSAGE_REACTION_REMOVE (intents
 * GuildMessageReactions and DirectMessageReactions) as colloquy records them: the emoji, or
 * a custom emoji's name.
 *
 * @example
 * ```ts
 * const change = discordReaction('MESSAGE_REACTION_ADD', payload.d, context);
 * ```
 */
import type { ReactionChange } from '../../src/reactions.js';
import { discordPlace, type DiscordParseContext } from './parse.js';

/** The gateway events of reactions colloquy records. */
export const REACTION_EVENTS = new Set(['MESSAGE_REACTION_ADD', 'MESSAGE_REACTION_REMOVE']);

/**
 * The change a reaction event says (at the time it is read: Discord dates none), or
 * undefined when it names no user, message or emoji.
 *
 * @example
 * ```ts
 * discordReaction('MESSAGE_REACTION_REMOVE', { user_id: '1', channel_id: '2', message_id: '3',
 *   emoji: { id: null, name: '👍' } }, context)?.removed; // true
 * ```
 */
export function discordReaction(
  event: string,
  data: unknown,
  context: DiscordParseContext,
): ReactionChange | undefined {
  const d = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
  const emoji = d.emoji as { id?: unknown; name?: unknown } | undefined;
  const { user_id: userId, channel_id: channelId, message_id: messageId } = d;
  const name = typeof emoji?.name === 'string' && emoji.name !== '' ? emoji.name : undefined;
  const reaction = name ?? (typeof emoji?.id === 'string' ? `custom:${emoji.id}` : undefined);
  if (
    typeof userId !== 'string' ||
    typeof channelId !== 'string' ||
    typeof messageId !== 'string' ||
    reaction === undefined
  ) {
    return undefined;
  }
  const guildId = typeof d.guild_id === 'string' ? d.guild_id : undefined;
  const place = discordPlace({ channelId, guildId, channelTypeHint: undefined }, context);
  return {
    channelType: 'discord',
    channelId: place.channelId,
    messageId,
    participantId: `discord:${userId}`,
    reaction,
    at: (context.now?.() ?? new Date()).toISOString(),
    ...reactor(d.member),
    ...(event === 'MESSAGE_REACTION_REMOVE' && { removed: true }),
  };
}

/** The reacting member's name and whether it is a bot, as a guild reaction event gives them. */
function reactor(member: unknown): Pick<ReactionChange, 'displayName' | 'byBot'> {
  const m = (typeof member === 'object' && member !== null ? member : {}) as {
    nick?: unknown;
    user?: { username?: unknown; global_name?: unknown; bot?: unknown };
  };
  const name = [m.nick, m.user?.global_name, m.user?.username].find(
    (n): n is string => typeof n === 'string' && n !== '',
  );
  return {
    ...(name !== undefined && { displayName: name }),
    ...(m.user?.bot === true && { byBot: true }),
  };
}
