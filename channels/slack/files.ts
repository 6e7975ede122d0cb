/**
 * Files out on Slack: each file uploaded with `files.uploadV2` (`files.getUploadURLExternal`,
 * the bytes to the URL it gives, `files.completeUploadExternal`) into the reply's channel and
 * thread, titled with its caption (an image's caption is its alt text too).
 */
import type { App } from '@slack/bolt';
import { attachment } from '../../src/attachments.js';
import type { MessageAttachment } from '../../src/attachments.js';
import type { OutboundMessage } from '../../src/channel.js';
import type { ColloquyError } from '../../src/errors.js';
import { postFiles } from '../shared/files.js';
import { toColloquyError } from './format.js';

/** The largest file Slack takes (1 GB). */
export const SLACK_FILE_LIMIT = 1024 * 1024 * 1024;

/**
 * Posts `message.files` after its text; each refused one is reported and left out.
 *
 * @example
 * ```ts
 * const files = await sendSlackFiles(app.client, message, (error) => handlers.error(error));
 * ```
 */
export function sendSlackFiles(
  client: App['client'],
  message: OutboundMessage,
  report: (error: ColloquyError) => void,
): Promise<MessageAttachment[]> {
  const { conversationId } = message;
  return postFiles(message.files, {
    platform: 'Slack',
    conversationId,
    limit: () => SLACK_FILE_LIMIT,
    report,
    fail: (error) => toColloquyError(error, { method: 'files.uploadV2', conversationId }),
    upload: async (file) => {
      const about = {
        file: Buffer.from(file.bytes),
        filename: file.name,
        title: file.caption ?? file.name,
        ...(file.kind === 'image' && file.caption !== undefined && { alt_text: file.caption }),
      };
      const { channelId: channel_id, threadId: thread_ts } = message;
      const answer = await client.filesUploadV2(
        thread_ts === undefined ? { ...about, channel_id } : { ...about, channel_id, thread_ts },
      );
      const [completed] = answer.files as { files?: { id?: string }[] }[];
      return attachment({
        kind: file.kind,
        name: file.name,
        mimeType: file.mimeType,
        size: file.bytes.byteLength,
        platformFileId: completed?.files?.[0]?.id,
        url: undefined,
      });
    },
  });
}

/** Slack's names for a few emoji; any other reaction is given by its name (`:eyes:` or `eyes`). */
const EMOJI_NAMES: Record<string, string> = {
  '👍': '+1',
  '👎': '-1',
  '👀': 'eyes',
  '✅': 'white_check_mark',
  '❤️': 'heart',
  '🎉': 'tada',
  '🙏': 'pray',
  '🔥': 'fire',
};

/**
 * The name Slack knows a reaction by: `+1` for 👍, `eyes` for `:eyes:`.
 *
 * @example
 * ```ts
 * slackReactionName('👀'); // 'eyes'
 * ```
 */
export function slackReactionName(emoji: string): string {
  return EMOJI_NAMES[emoji] ?? emoji.replace(/^:|:$/g, '');
}
