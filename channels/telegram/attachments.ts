/**
 * The file a Telegram message carries, as colloquy records it: a photo (its largest size),
 * document, voice note, video, video note, audio, animation or sticker, with its `file_id`
 * (Telegram gives no URL: a file is fetched through `getFile`). Never the bytes.
 *
 * @example
 * ```ts
 * const files = telegramAttachments(update.message); // [{ kind: 'voice', mimeType: 'audio/ogg', … }]
 * ```
 */
import type { Message } from 'grammy/types';
import {
  attachment,
  byteSize,
  kindOfMimeType,
  type AttachmentKind,
  type MessageAttachment,
} from '../../src/attachments.js';

/** The fields every Telegram file object may have. */
interface TelegramFile {
  file_id?: unknown;
  file_size?: unknown;
  file_name?: unknown;
  mime_type?: unknown;
}

/**
 * The message's files: Telegram puts at most one on a message (an album arrives as one message
 * per photo). An animation also comes as a `document`; it is recorded once, as an animation.
 *
 * @example
 * ```ts
 * telegramAttachments({ ...message, voice: { file_id: 'AwAC', file_unique_id: 'u', duration: 3 } });
 * // [{ kind: 'voice', platformFileId: 'AwAC' }]
 * ```
 */
export function telegramAttachments(message: Message): MessageAttachment[] {
  const m = message as unknown as Partial<Record<string, unknown>>;
  const photos = m.photo;
  if (Array.isArray(photos) && photos.length > 0) {
    return fileOf('image', photos[photos.length - 1], 'image/jpeg');
  }
  if (isObject(m.animation)) return fileOf('animation', m.animation, 'video/mp4');
  if (isObject(m.document)) return fileOf(undefined, m.document);
  if (isObject(m.voice)) return fileOf('voice', m.voice, 'audio/ogg');
  if (isObject(m.audio)) return fileOf('audio', m.audio);
  if (isObject(m.video)) return fileOf('video', m.video);
  if (isObject(m.video_note)) return fileOf('video', m.video_note, 'video/mp4');
  if (isObject(m.sticker)) return stickerOf(m.sticker);
  return [];
}

function fileOf(
  kind: AttachmentKind | undefined,
  value: unknown,
  defaultMimeType?: string,
): MessageAttachment[] {
  if (!isObject(value)) return [];
  const file = value as TelegramFile;
  const mimeType = typeof file.mime_type === 'string' ? file.mime_type : defaultMimeType;
  return [
    attachment({
      kind: kind ?? kindOfMimeType(mimeType),
      name: typeof file.file_name === 'string' ? file.file_name : undefined,
      mimeType,
      size: byteSize(file.file_size),
      platformFileId: typeof file.file_id === 'string' ? file.file_id : undefined,
      url: undefined,
    }),
  ];
}

/** A sticker: named by its emoji; WebP, animated (TGS) or video (WebM). */
function stickerOf(value: unknown): MessageAttachment[] {
  const sticker = value as TelegramFile & {
    emoji?: unknown;
    is_animated?: unknown;
    is_video?: unknown;
  };
  const mimeType =
    sticker.is_animated === true
      ? 'application/x-tgsticker'
      : sticker.is_video === true
        ? 'video/webm'
        : 'image/webp';
  return [
    attachment({
      kind: 'sticker',
      name: typeof sticker.emoji === 'string' ? sticker.emoji : undefined,
      mimeType,
      size: byteSize(sticker.file_size),
      platformFileId: typeof sticker.file_id === 'string' ? sticker.file_id : undefined,
      url: undefined,
    }),
  ];
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
