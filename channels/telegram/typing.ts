import type { Api } from 'grammy';
import type { OutboundMessage, TypingIndicator } from '../../src/channel.js';
import { chatIdValue } from './format.js';

/**
 * Telegram's "typing…" in the chat (and forum topic) a reply goes to: `sendChatAction` with
 * `typing`, which clients show for about five seconds or until the bot's next message.
 *
 * @example
 * ```ts
 * const typing = telegramTyping(bot.api);
 * await typing.show(outboundFor(turn, ''));
 * ```
 */
export function telegramTyping(api: Api): TypingIndicator {
  return {
    repeatMs: 4500,
    async show(place: OutboundMessage) {
      await api.sendChatAction(chatIdValue(place.channelId), 'typing', {
        ...(place.threadId !== undefined &&
          place.scope === 'thread' && { message_thread_id: Number(place.threadId) }),
      });
    },
  };
}
