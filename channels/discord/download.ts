/**
 * A Discord file's bytes: the attachment's CDN URL (signed by Discord; no token is sent).
 *
 * @example
 * ```ts
 * const { bytes } = await discordDownload(file, { maxBytes: 1_048_576 });
 * ```
 */
import type {
  AttachmentFetchOptions,
  FetchedAttachment,
  MessageAttachment,
} from '../../src/attachments.js';
import { checkDeclaredSize, download } from '../shared/download.js';
import { platformError } from '../shared/platform.js';

/**
 * Fetches `file` from its CDN URL, at most `options.maxBytes` of it.
 *
 * @example
 * ```ts
 * await discordDownload({ kind: 'image', url: 'https://cdn.discordapp.com/attachments/1/2/r.png' },
 *   { maxBytes: 1_048_576 });
 * ```
 */
export async function discordDownload(
  file: MessageAttachment,
  options: AttachmentFetchOptions,
): Promise<FetchedAttachment> {
  const what = checkDeclaredSize('discord', file, options);
  if (file.url === undefined || !/^https?:\/\//i.test(file.url)) {
    throw platformError('discord', `the file ${what}`, {
      kind: 'refused',
      code: 'file_not_fetchable',
      detail: 'no CDN URL',
    });
  }
  return download('discord', file.url, options, { what });
}
