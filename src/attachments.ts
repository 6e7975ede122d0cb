/**
 * What a turn carried besides its text: one entry per file, image, voice note, video or
 * sticker, as a reference (the platform's id and URL, never the bytes). Stored with the turn
 * (`StoredMessage.attachments`, one row each in the `message_attachments` view).
 *
 * @example
 * ```ts
 * const invoice: MessageAttachment = {
 *   kind: 'file',
 *   name: 'invoice.pdf',
 *   mimeType: 'application/pdf',
 *   size: 245760,
 *   platformFileId: 'F0123456789',
 *   url: 'https://files.slack.com/files-pri/T1-F0123456789/invoice.pdf',
 * };
 * ```
 */
export interface MessageAttachment {
  kind: AttachmentKind;
  /** The file's name as the platform gives it (Telegram photos and voice notes have none). */
  name?: string;
  /** MIME type as the platform gives it, unchecked (an unknown type is kept as it is). */
  mimeType?: string;
  /** Size in bytes, when the platform says. */
  size?: number;
  /** The platform's id for the file (Slack file id, Discord attachment id, Telegram `file_id`). */
  platformFileId?: string;
  /** Where the platform serves it (Slack `url_private`, Discord CDN URL); Telegram has none. */
  url?: string;
}

/**
 * `image`, `video`, `audio` (music), `voice` (a voice note), `sticker`, `animation` (GIF) or
 * `file` (anything else: documents, archives). Open-ended so a channel can add its own.
 */
export type AttachmentKind =
  'image' | 'video' | 'audio' | 'voice' | 'sticker' | 'animation' | 'file' | (string & {});

/**
 * The kind a MIME type suggests when a platform names none (`image/png` → `image`).
 *
 * @example
 * ```ts
 * kindOfMimeType('audio/ogg'); // 'audio'
 * kindOfMimeType(undefined); // 'file'
 * ```
 */
export function kindOfMimeType(mimeType: string | undefined): AttachmentKind {
  const top = mimeType?.split('/')[0]?.toLowerCase();
  return top === 'image' || top === 'video' || top === 'audio' ? top : 'file';
}

/**
 * A size in bytes as a platform payload gives it: a whole non-negative number, else absent.
 *
 * @example
 * ```ts
 * byteSize(5_000_000_000); // 5000000000
 * byteSize('12'); // undefined
 * ```
 */
export function byteSize(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/**
 * An attachment with only the fields that have a value (no `undefined` keys), so it is stored
 * and read back the same.
 *
 * @example
 * ```ts
 * attachment({ kind: 'file', name: 'a.txt', size: undefined }); // { kind: 'file', name: 'a.txt' }
 * ```
 */
export function attachment(fields: {
  [K in keyof MessageAttachment]: MessageAttachment[K] | undefined;
}): MessageAttachment {
  const out: MessageAttachment = { kind: fields.kind ?? 'file' };
  if (typeof fields.name === 'string') out.name = fields.name;
  if (typeof fields.mimeType === 'string') out.mimeType = fields.mimeType;
  if (fields.size !== undefined) out.size = fields.size;
  if (typeof fields.platformFileId === 'string') out.platformFileId = fields.platformFileId;
  if (typeof fields.url === 'string') out.url = fields.url;
  return out;
}

/**
 * A size as people read it: bytes, KB, MB, GB or TB (powers of 1024, one decimal below ten).
 *
 * @example
 * ```ts
 * formatBytes(245760); // '240 KB'
 * formatBytes(1_572_864); // '1.5 MB'
 * ```
 */
export function formatBytes(size: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let value = size;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const shown = unit > 0 && value < 10 ? value.toFixed(1).replace(/\.0$/, '') : Math.round(value);
  return `${shown} ${units[unit]}`;
}

/**
 * How a file reads in a prompt that does not carry it: its kind, name and size in brackets.
 *
 * @example
 * ```ts
 * attachmentPlaceholder({ kind: 'image', name: 'invoice.png', size: 245760 }); // '[image: invoice.png, 240 KB]'
 * attachmentPlaceholder({ kind: 'voice' }); // '[voice]'
 * ```
 */
export function attachmentPlaceholder(file: MessageAttachment): string {
  const about = [file.name, file.size === undefined ? undefined : formatBytes(file.size)].filter(
    (part): part is string => part !== undefined && part !== '',
  );
  return about.length === 0 ? `[${file.kind}]` : `[${file.kind}: ${about.join(', ')}]`;
}

/**
 * A turn's text with a placeholder for each of its files after it (a caption first).
 *
 * @example
 * ```ts
 * withPlaceholders('see attached', [{ kind: 'file', name: 'a.pdf' }]); // 'see attached [file: a.pdf]'
 * ```
 */
export function withPlaceholders(
  content: string,
  files: readonly MessageAttachment[] | undefined,
): string {
  if (files === undefined || files.length === 0) return content;
  return [content, ...files.map(attachmentPlaceholder)].filter((part) => part !== '').join(' ');
}

/**
 * How a channel fetches one file's bytes (see `Channel.fetchAttachment`).
 *
 * @example
 * ```ts
 * const options: AttachmentFetchOptions = { maxBytes: 1_048_576, timeoutMs: 10_000 };
 * ```
 */
export interface AttachmentFetchOptions {
  /**
   * Most bytes read: a file the platform says is larger is not fetched, and a body that grows
   * past it is no longer read (`AttachmentTooLargeError`).
   */
  maxBytes: number;
  /** How long the whole fetch may take, in ms (default 10 000). */
  timeoutMs?: number;
  /** Aborts the fetch (the run stopped). */
  signal?: AbortSignal;
}

/**
 * A file's bytes as the platform served them, held in memory only.
 *
 * @example
 * ```ts
 * const { bytes, mimeType } = await channel.fetchAttachment!(turn.attachments![0]!, { maxBytes: 65_536 });
 * ```
 */
export interface FetchedAttachment {
  bytes: Uint8Array;
  /** The type the platform served it as, when it said. */
  mimeType?: string;
}

/**
 * Fetches a file's bytes through its platform: what `Channel.fetchAttachment` and
 * `AgentRunContext.fetchAttachment` are.
 *
 * @example
 * ```ts
 * const fetch: FetchAttachment = (file, options) => channel.fetchAttachment!(file, options);
 * ```
 */
export type FetchAttachment = (
  file: MessageAttachment,
  options: AttachmentFetchOptions,
) => Promise<FetchedAttachment>;
