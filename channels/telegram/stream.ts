import type { Api } from 'grammy';
import type { OutboundMessage, ReplyStream, StreamOptions } from '../../src/channel.js';
import { editedStream } from '../shared/stream.js';
import { toColloquyError, toSendMessagePayloads } from './format.js';

/**
 * A Telegram reply shown as it is written: `sendMessage` with the first words, then
 * `editMessageText` at most once a second (Telegram refuses an edit that changes nothing, so
 * none is sent), a next message once the text passes 4096 characters. Rate limits (429) are
 * waited out by the channel's retrying transformer.
 *
 * @example
 * ```ts
 * const reply = telegramStream(bot.api, outboundFor(turn, ''));
 * reply.update('The order');
 * await reply.end('The order ships tomorrow.');
 * ```
 */
export function telegramStream(
  api: Api,
  message: OutboundMessage,
  options?: StreamOptions,
): ReplyStream {
  const fail = (error: unknown, method: string) =>
    toColloquyError(error, method, { conversationId: message.conversationId });
  return editedStream(
    {
      parts: (text) => toSendMessagePayloads({ ...message, content: text }),
      textOf: (part) => part.text,
      post: async ({ chat_id, text, ...other }) => {
        const sent = await api.sendMessage(chat_id, text, other);
        return { id: String(sent.message_id), timestamp: new Date(sent.date * 1000).toISOString() };
      },
      edit: async (id, { chat_id, text }) => {
        await api.editMessageText(chat_id, Number(id), text);
      },
      editEveryMs: 1000,
      retryAfterMs: () => undefined,
      fail: (error, index) => fail(error, index === 0 ? 'sendMessage' : 'editMessageText'),
    },
    options,
  );
}
