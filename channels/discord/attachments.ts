/**
 * The files of a Discord message as colloquy records them: each attachment (a voice message
 * is one with `duration_secs`) and each sticker, as references (CDN URLs, never the bytes).
 *
 * @example
 * ```ts
 * const files = discordAttachments(payload.d); // [{ kind: 'image', name: 'receipt.png', … }]
 * ```
 */
import {
  attachment,
  byteSize,
  kindOfMimeType,
  type MessageAttachment,
} from '../../src/attachments.js';

/** Where Discord serves a sticker, by format type (1 PNG, 2 APNG, 3 Lottie, 4 GIF). */
const STICKER_FORMATS: Record<number, { extension: string; mimeType: string }> = {
  1: { extension: 'png', mimeType: 'image/png' },
  2: { extension: 'png', mimeType: 'image/apng' },
  3: { extension: 'json', mimeType: 'application/json' },
  4: { extension: 'gif', mimeType: 'image/gif' },
};

/**
 * The attachments, then the stickers, of a MESSAGE_CREATE `d`; entries without an id are
 * left out (Discord always sends one).
 *
 * @example
 * ```ts
 * discordAttachments({ attachments: [], sticker_items: [{ id: '7', name: 'Wave', format_type: 1 }] });
 * // [{ kind: 'sticker', name: 'Wave', mimeType: 'image/png', platformFileId: '7', url: … }]
 * ```
 */
export function discordAttachments(d: Record<string, unknown>): MessageAttachment[] {
  const files = Array.isArray(d.attachments) ? d.attachments.flatMap(fileOf) : [];
  const stickers = Array.isArray(d.sticker_items) ? d.sticker_items.flatMap(stickerOf) : [];
  return [...files, ...stickers];
}

function fileOf(value: unknown): MessageAttachment[] {
  if (typeof value !== 'object' || value === null) return [];
  const a = value as Record<string, unknown>;
  if (typeof a.id !== 'string') return [];
  const mimeType = typeof a.content_type === 'string' ? a.content_type : undefined;
  const voice = typeof a.duration_secs === 'number' || typeof a.waveform === 'string';
  return [
    attachment({
      kind: voice ? 'voice' : kindOfMimeType(mimeType),
      name: typeof a.filename === 'string' ? a.filename : undefined,
      mimeType,
      size: byteSize(a.size),
      platformFileId: a.id,
      url: typeof a.url === 'string' ? a.url : undefined,
    }),
  ];
}

function stickerOf(value: unknown): MessageAttachment[] {
  if (typeof value !== 'object' || value === null) return [];
  const s = value as Record<string, unknown>;
  if (typeof s.id !== 'string') return [];
  const format = typeof s.format_type === 'number' ? STICKER_FORMATS[s.format_type] : undefined;
  return [
    attachment({
      kind: 'sticker',
      name: typeof s.name === 'string' ? s.name : undefined,
      mimeType: format?.mimeType,
      size: undefined,
      platformFileId: s.id,
      url:
        format === undefined
          ? undefined
          : `https://media.discordapp.net/stickers/${s.id}.${format.extension}`,
    }),
  ];
}
