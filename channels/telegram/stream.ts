import type { Api } from 'grammy';
import type { OutboundMessage, ReplyStream, StreamOptions } from '../../src/channel.js';
import type { PostedPart } from '../shared/platform.js';
import { editedStream } from '../shared/stream.js';
import { notModified, refusedMarkup, telegramParts, toColloquyError } from './format.js';
import type { TelegramPart } from './format.js';

/** Least time between two edits of one message while the answer is written. */
const EDIT_EVERY_MS = 1000;

/**
 * Posts one part of a reply with `sendMessage`, as HTML, and again as plain text when Telegram
 * refuses the markup.
 *
 * @example
 * ```ts
 * const { id } = await postTelegramPart(bot.api, telegramParts(outbound)[0]!);
 * ```
 */
export async function postTelegramPart(api: Api, part: TelegramPart): Promise<PostedPart> {
  const post = async ({ chat_id, text, ...other }: TelegramPart['payload']) => {
    const sent = await api.sendMessage(chat_id, text, other);
    return { id: String(sent.message_id), timestamp: new Date(sent.date * 1000).toISOString() };
  };
  try {
    return await post(part.payload);
  } catch (error) {
    if (!refusedMarkup(error)) throw error;
    const { parse_mode: _html, ...plain } = part.payload;
    return post({ ...plain, text: part.plainText });
  }
}

/**
 * A Telegram reply shown as it is written with `sendMessage` and then `editMessageText` (HTML,
 * plain text when the markup is refused) at most once a second, never an edit that changes
 * nothing (Telegram refuses one: "message is not modified", which therefore answers a repeated
 * edit whose first answer was lost, and counts as done), a next message once the text
 * passes 4096 characters. Rate limits (429 `retry_after`) are waited out by the channel's
 * retrying transformer.
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
      parts: (text) => telegramParts({ ...message, content: text }),
      textOf: (part) => part.payload.text,
      post: (part) => postTelegramPart(api, part),
      edit: async (id, { payload, plainText }) => {
        const { chat_id, text, parse_mode } = payload;
        const edit = async (...args: Parameters<Api['editMessageText']>) => {
          // The stream sends no edit that changes nothing: refused as one, it is the repeat of
          // an edit whose answer was lost, and the message shows this text already.
          await api.editMessageText(...args).catch((error: unknown) => {
            if (!notModified(error)) throw error;
          });
        };
        try {
          await edit(chat_id, Number(id), text, { parse_mode });
        } catch (error) {
          if (!refusedMarkup(error)) throw error;
          await edit(chat_id, Number(id), plainText);
        }
      },
      editEveryMs: EDIT_EVERY_MS,
      retryAfterMs: () => undefined,
      fail: (error, _index, call) =>
        fail(error, call === 'post' ? 'sendMessage' : 'editMessageText'),
    },
    options,
  );
}
