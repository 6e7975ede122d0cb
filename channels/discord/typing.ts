import { Routes } from 'discord.js';
import type { REST } from 'discord.js';
import type { OutboundMessage, TypingIndicator } from '../../src/channel.js';

/**
 * Discord's typing indicator in the channel (or thread) a reply goes to: `POST
 * /channels/{id}/typing`, which lasts about ten seconds or until the bot posts.
 *
 * @example
 * ```ts
 * const typing = discordTyping(() => client.rest);
 * await typing.show(outboundFor(turn, ''));
 * ```
 */
export function discordTyping(rest: () => REST): TypingIndicator {
  return {
    repeatMs: 8000,
    async show(place: OutboundMessage) {
      await rest().post(Routes.channelTyping(place.threadId ?? place.channelId));
    },
  };
}
