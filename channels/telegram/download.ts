/**
 * A Telegram file's bytes: `getFile` for its `file_path`, then
 * `<apiRoot>/file/bot<token>/<file_path>` (the Bot API serves files of up to 20 MB). The URL
 * holds the token: it never reaches an error.
 *
 * @example
 * ```ts
 * const { bytes } = await telegramDownload(file, { maxBytes: 1_048_576 }, bot.api, 'https://api.telegram.org');
 * ```
 */
import type { Api } from 'grammy';
import type {
  AttachmentFetchOptions,
  FetchedAttachment,
  MessageAttachment,
} from '../../src/attachments.js';
import { checkDeclaredSize, DEFAULT_DOWNLOAD_TIMEOUT_MS, download } from '../shared/download.js';
import { platformError } from '../shared/platform.js';
import { toColloquyError } from './format.js';

/** Where grammy sends Bot API calls unless told otherwise. */
export const TELEGRAM_API_ROOT = 'https://api.telegram.org';

/**
 * Fetches `file` by its `file_id`, at most `options.maxBytes` of it.
 *
 * @example
 * ```ts
 * await telegramDownload({ kind: 'voice', platformFileId: 'AwACAgIAAxkBAAI' }, { maxBytes: 65_536 },
 *   bot.api, TELEGRAM_API_ROOT);
 * ```
 */
export async function telegramDownload(
  file: MessageAttachment,
  options: AttachmentFetchOptions,
  api: Api,
  apiRoot: string,
): Promise<FetchedAttachment> {
  const what = checkDeclaredSize('telegram', file, options);
  if (file.platformFileId === undefined) {
    throw platformError('telegram', `the file ${what}`, {
      kind: 'refused',
      code: 'file_not_fetchable',
      detail: 'no file_id',
    });
  }
  let path: string | undefined;
  try {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_DOWNLOAD_TIMEOUT_MS);
    const signal =
      options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
    path = (await api.getFile(file.platformFileId, signal as Parameters<Api['getFile']>[1]))
      .file_path;
  } catch (error) {
    throw toColloquyError(error, 'getFile');
  }
  if (path === undefined) {
    throw platformError('telegram', 'getFile', { kind: 'refused', code: 'no_file_path' });
  }
  const url = `${apiRoot.replace(/\/+$/, '')}/file/bot${api.token}/${path}`;
  return download('telegram', url, options, { what });
}
