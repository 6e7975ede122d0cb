/**
 * A Slack file's bytes: `url_private` with the bot token as a bearer token. The token is sent
 * only to Slack's file host (`files.slack.com`) or the host of the Web API the channel is
 * pointed at (`clientOptions.slackApiUrl`); a redirect is a refusal (Slack sends a request it
 * does not accept to its sign-in page).
 *
 * @example
 * ```ts
 * const { bytes } = await slackDownload(file, { maxBytes: 65_536 }, { token, apiUrl: 'https://slack.com/api/' });
 * ```
 */
import type {
  AttachmentFetchOptions,
  FetchedAttachment,
  MessageAttachment,
} from '../../src/attachments.js';
import { checkDeclaredSize, download, originOf } from '../shared/download.js';
import { platformError } from '../shared/platform.js';

/** Where Slack serves `url_private`. */
const SLACK_FILES = 'https://files.slack.com';

/**
 * Fetches `file` from its `url_private`, at most `options.maxBytes` of it.
 *
 * @example
 * ```ts
 * await slackDownload({ kind: 'image', url: 'https://files.slack.com/files-pri/T1-F1/a.png' },
 *   { maxBytes: 1_048_576 }, { token: 'xoxb-…', apiUrl: 'https://slack.com/api/' });
 * ```
 */
export async function slackDownload(
  file: MessageAttachment,
  options: AttachmentFetchOptions,
  slack: { token: string | undefined; apiUrl: string },
): Promise<FetchedAttachment> {
  const what = checkDeclaredSize('slack', file, options);
  const trusted = new Set([SLACK_FILES, originOf(slack.apiUrl)]);
  if (file.url === undefined || !trusted.has(originOf(file.url)) || slack.token === undefined) {
    throw platformError('slack', `the file ${what}`, {
      kind: 'refused',
      code: 'file_not_fetchable',
      detail: 'no url_private on a Slack host, or no bot token',
    });
  }
  return download('slack', file.url, options, {
    what,
    headers: { authorization: `Bearer ${slack.token}` },
    redirect: 'manual',
  });
}
