/**
 * Files out on Telegram: an image of up to 10 MB goes as a photo (`sendPhoto`), anything
 * else as a document (`sendDocument`, up to 50 MB, the Bot API's upload limit), each in the
 * reply's chat and forum topic, with its caption.
 */
import { InputFile } from 'grammy';
import type { Api } from 'grammy';
import type { Message } from 'grammy/types';
import { attachment } from '../../src/attachments.js';
import type { MessageAttachment } from '../../src/attachments.js';
import type { OutboundMessage } from '../../src/channel.js';
import type { ColloquyError } from '../../src/errors.js';
import { postFiles } from '../shared/files.js';
import type { PostedFiles, ReadyFile } from '../shared/files.js';
import { chatIdValue, toColloquyError } from './format.js';

/** The largest file the Bot API takes in an upload. */
export const TELEGRAM_FILE_LIMIT = 50 * 1024 * 1024;
/** The largest photo; a bigger image goes as a document. */
export const TELEGRAM_PHOTO_LIMIT = 10 * 1024 * 1024;
const PHOTO_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp']);

/**
 * Posts `message.files` after its text, one message each; each refused one is reported and
 * left out.
 *
 * @example
 * ```ts
 * const { files, messageIds } = await sendTelegramFiles(bot.api, message, (error) => handlers.error(error));
 * ```
 */
export function sendTelegramFiles(
  api: Api,
  message: OutboundMessage,
  report: (error: ColloquyError) => void,
): Promise<PostedFiles> {
  const where = {
    ...(message.threadId !== undefined && { message_thread_id: Number(message.threadId) }),
  };
  const chat = chatIdValue(message.channelId);
  return postFiles(message.files, {
    platform: 'Telegram',
    conversationId: message.conversationId,
    limit: () => TELEGRAM_FILE_LIMIT,
    report,
    fail: (error) => toColloquyError(error, 'a file upload', message),
    upload: async (file) => {
      const input = new InputFile(file.bytes, file.name);
      const other = { ...where, ...(file.caption !== undefined && { caption: file.caption }) };
      const sent = isPhoto(file)
        ? await api.sendPhoto(chat, input, other)
        : await api.sendDocument(chat, input, other);
      return { file: sentFile(sent, file), messageId: String(sent.message_id) };
    },
  });
}

function isPhoto(file: ReadyFile): boolean {
  return PHOTO_TYPES.has(file.mimeType) && file.bytes.byteLength <= TELEGRAM_PHOTO_LIMIT;
}

/** The file as Telegram answered: the largest photo size, or the document. */
function sentFile(sent: Message, file: ReadyFile): MessageAttachment {
  const photo = sent.photo?.at(-1);
  if (photo !== undefined) {
    return attachment({
      kind: 'image',
      name: file.name,
      mimeType: file.mimeType,
      size: photo.file_size ?? file.bytes.byteLength,
      platformFileId: photo.file_id,
      url: undefined,
    });
  }
  const document = sent.document;
  return attachment({
    kind: file.kind,
    name: document?.file_name ?? file.name,
    mimeType: document?.mime_type ?? file.mimeType,
    size: document?.file_size ?? file.bytes.byteLength,
    platformFileId: document?.file_id,
    url: undefined,
  });
}
