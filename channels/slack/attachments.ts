/**
 * The files of a Slack message (`files` on a `file_share` message, or any message that has
 * them) as colloquy records them: name, MIME type, size, file id and `url_private` (which
 * needs the bot token to fetch). Never the bytes. A file Slack hides (`mode: 'tombstone'`, or
 * `hidden_by_limit` on a free workspace) is kept with what Slack says of it, at least its id.
 *
 * @example
 * ```ts
 * const files = slackAttachments(event); // [{ kind: 'file', name: 'invoice.pdf', … }]
 * ```
 */
import {
  attachment,
  byteSize,
  kindOfMimeType,
  type AttachmentKind,
  type MessageAttachment,
} from '../../src/attachments.js';

/**
 * The message event's files, in order; an entry that is not an object with an id is left
 * out.
 *
 * @example
 * ```ts
 * slackAttachments({ files: [{ id: 'F1', name: 'a.png', mimetype: 'image/png', size: 3 }] });
 * // [{ kind: 'image', name: 'a.png', mimeType: 'image/png', size: 3, platformFileId: 'F1' }]
 * ```
 */
export function slackAttachments(event: Record<string, unknown>): MessageAttachment[] {
  return Array.isArray(event.files) ? event.files.flatMap(fileOf) : [];
}

function fileOf(value: unknown): MessageAttachment[] {
  if (typeof value !== 'object' || value === null) return [];
  const f = value as Record<string, unknown>;
  if (typeof f.id !== 'string') return [];
  const mimeType = typeof f.mimetype === 'string' && f.mimetype !== '' ? f.mimetype : undefined;
  return [
    attachment({
      kind: kindOf(f.subtype, mimeType),
      name: typeof f.name === 'string' ? f.name : undefined,
      mimeType,
      size: byteSize(f.size),
      platformFileId: f.id,
      url: typeof f.url_private === 'string' ? f.url_private : undefined,
    }),
  ];
}

/** Slack's audio and video clips (recorded in the app) are voice notes and videos. */
function kindOf(subtype: unknown, mimeType: string | undefined): AttachmentKind {
  if (subtype === 'slack_audio') return 'voice';
  if (subtype === 'slack_video') return 'video';
  return kindOfMimeType(mimeType);
}
