/**
 * Files out on Slack: each file uploaded with `files.uploadV2` (`files.getUploadURLExternal`,
 * the bytes to the URL it gives, `files.completeUploadExternal`) into the reply's channel and
 * thread, titled with its caption (an image's caption is its alt text too).
 */
import type { App } from '@slack/bolt';
import { attachment } from '../../src/attachments.js';
import type { OutboundMessage } from '../../src/channel.js';
import type { ColloquyError } from '../../src/errors.js';
import { filesOnly, postFiles } from '../shared/files.js';
import type { PostedFiles } from '../shared/files.js';
import { toColloquyError } from './format.js';

/** The largest file Slack takes (1 GB). */
export const SLACK_FILE_LIMIT = 1024 * 1024 * 1024;

/**
 * Posts `message.files` after its text; each refused one is reported and left out. Each file
 * is shared in a message of its own; its `ts` is read from the file's `shares`, which Slack
 * fills in asynchronously: for files alone (no text), when `files.completeUploadExternal`
 * answers without them, one `files.info` call asks again, and a file still being shared then
 * is posted without its message's `ts` (see docs/files-out.md).
 *
 * @example
 * ```ts
 * const { files, messageIds } = await sendSlackFiles(app.client, message, (error) => handlers.error(error));
 * ```
 */
export function sendSlackFiles(
  client: App['client'],
  message: OutboundMessage,
  report: (error: ColloquyError) => void,
): Promise<PostedFiles> {
  const { conversationId } = message;
  const { channelId: channel_id, threadId: thread_ts } = message;
  const alone = filesOnly(message);
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
      const answer = await client.filesUploadV2(
        thread_ts === undefined ? { ...about, channel_id } : { ...about, channel_id, thread_ts },
      );
      const [completed] = answer.files as { files?: SharedFile[] }[];
      const shared = completed?.files?.[0];
      const answered = attachment({
        kind: file.kind,
        name: file.name,
        mimeType: file.mimeType,
        size: file.bytes.byteLength,
        platformFileId: shared?.id,
        url: undefined,
      });
      const known = sharedTs(shared, channel_id);
      // The message is named only when it is the post itself (files alone): then it is worth a call.
      const ask = known === undefined && alone;
      return {
        file: answered,
        messageId: ask ? await askShare(client, shared?.id, message, report) : known,
      };
    },
  });
}

/** A file as Slack answers it, with where it is shared (`shares.public` or `.private`, by channel). */
interface SharedFile {
  id?: string;
  shares?: Partial<Record<'public' | 'private', Record<string, { ts?: string }[] | undefined>>>;
}

/** The `ts` of the message that shares `file` in `channel`, once Slack has shared it. */
function sharedTs(file: SharedFile | undefined, channel: string): string | undefined {
  const shares = file?.shares?.public?.[channel] ?? file?.shares?.private?.[channel];
  return shares?.[0]?.ts;
}

/**
 * The `ts` of the message sharing file `id`, by one `files.info` call: undefined while Slack
 * is still sharing it, or when the call fails (reported: the file itself went out).
 */
async function askShare(
  client: App['client'],
  id: string | undefined,
  message: OutboundMessage,
  report: (error: ColloquyError) => void,
): Promise<string | undefined> {
  if (id === undefined) return undefined;
  try {
    const info = await client.files.info({ file: id });
    return sharedTs(info.file as SharedFile | undefined, message.channelId);
  } catch (error) {
    const { conversationId } = message;
    const failure = toColloquyError(error, { method: 'files.info', conversationId });
    failure.message = `file ${id} went out, but not the ts of its message: ${failure.message}`;
    report(failure);
    return undefined;
  }
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
