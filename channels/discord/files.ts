/**
 * Files out on Discord: each file posted as a message attachment (multipart/form-data with
 * `payload_json` and `files[0]`, as discord.js sends `files`) in the reply's channel or
 * thread, its caption as the attachment's description (alt text). Up to 10 MiB, Discord's
 * default for a bot's upload.
 */
import { Routes } from 'discord.js';
import type { REST } from 'discord.js';
import { attachment } from '../../src/attachments.js';
import type { OutboundMessage } from '../../src/channel.js';
import type { ColloquyError } from '../../src/errors.js';
import { postFiles } from '../shared/files.js';
import type { PostedFiles } from '../shared/files.js';
import { discordNonce, toColloquyError } from './format.js';

/** The largest file a bot uploads without a boosted server (10 MiB). */
export const DISCORD_FILE_LIMIT = 10 * 1024 * 1024;

/** What Discord answers for an attachment. */
interface DiscordAttachment {
  id?: string;
  filename?: string;
  size?: number;
  url?: string;
  content_type?: string;
}

/**
 * Posts `message.files` after its text, one message each; each refused one is reported and
 * left out. A reply's file message carries a nonce of its own (`enforce_nonce`), so a post
 * discord.js sends again after a reset or a timeout is answered with the message Discord
 * created.
 *
 * @example
 * ```ts
 * const { files, messageIds } = await sendDiscordFiles(client.rest, channelId, message, (error) => handlers.error(error));
 * ```
 */
export function sendDiscordFiles(
  rest: REST,
  channelId: string,
  message: OutboundMessage,
  report: (error: ColloquyError) => void,
): Promise<PostedFiles> {
  const { conversationId, replyId } = message;
  let index = 0;
  return postFiles(message.files, {
    platform: 'Discord',
    conversationId,
    limit: () => DISCORD_FILE_LIMIT,
    report,
    fail: (error) => toColloquyError(error, `a file in ${channelId}`, { conversationId }),
    upload: async (file) => {
      const nonce = replyId === undefined ? undefined : discordNonce(`${replyId}\nfile`, index++);
      const posted = (await rest.post(Routes.channelMessages(channelId), {
        body: {
          ...(nonce !== undefined && { nonce, enforce_nonce: true }),
          attachments: [
            {
              id: 0,
              filename: file.name,
              ...(file.caption !== undefined && { description: file.caption }),
            },
          ],
        },
        files: [{ name: file.name, data: Buffer.from(file.bytes), contentType: file.mimeType }],
      })) as { id?: string; attachments?: DiscordAttachment[] };
      const sent = posted.attachments?.[0];
      const answered = attachment({
        kind: file.kind,
        name: sent?.filename ?? file.name,
        mimeType: sent?.content_type ?? file.mimeType,
        size: sent?.size ?? file.bytes.byteLength,
        platformFileId: sent?.id,
        url: sent?.url,
      });
      return { file: answered, messageId: posted.id };
    },
  });
}
