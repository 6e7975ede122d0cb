/**
 * A Discord file's bytes: the attachment's CDN URL (signed by Discord; no token is sent), on
 * Discord's CDN hosts or the host of the REST API the bot is pointed at (`rest.api`) only.
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
import { checkDeclaredSize, download, originOf } from '../shared/download.js';
import { platformError } from '../shared/platform.js';

/** Where Discord serves attachments and stickers. */
const DISCORD_CDN = ['https://cdn.discordapp.com', 'https://media.discordapp.net'];

/**
 * Fetches `file` from its CDN URL, at most `options.maxBytes` of it; a URL on any other host
 * than Discord's CDN or `apiUrl`'s is refused unfetched.
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
  apiUrl?: string,
): Promise<FetchedAttachment> {
  const what = checkDeclaredSize('discord', file, options);
  const trusted = new Set([...DISCORD_CDN, apiUrl === undefined ? undefined : originOf(apiUrl)]);
  if (file.url === undefined || !trusted.has(originOf(file.url))) {
    throw platformError('discord', `the file ${what}`, {
      kind: 'refused',
      code: 'file_not_fetchable',
      detail: 'no URL on a Discord CDN host',
    });
  }
  return download('discord', file.url, options, { what });
}
