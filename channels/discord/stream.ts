import { Routes } from 'discord.js';
import type { REST } from 'discord.js';
import type { OutboundMessage, ReplyStream, StreamOptions } from '../../src/channel.js';
import { editedStream } from '../shared/stream.js';
import { formatOutbound, toColloquyError } from './format.js';
import type { DiscordAllowedMentions } from './format.js';

/**
 * A Discord reply shown as it is written: posted with the first words, then edited (`PATCH`)
 * at most every 1.25 s, a next message once the text passes 2000 characters. discord.js
 * waits out rate limits (429 `retry_after`) itself.
 *
 * @example
 * ```ts
 * const reply = discordStream(client.rest, outboundFor(turn, ''), allowedMentions);
 * ```
 */
export function discordStream(
  rest: REST,
  message: OutboundMessage,
  allowedMentions: DiscordAllowedMentions,
  options?: StreamOptions,
): ReplyStream {
  const { channelId } = formatOutbound(message, allowedMentions);
  return editedStream(
    {
      parts: (text) => formatOutbound({ ...message, content: text }, allowedMentions).bodies,
      textOf: (body) => body.content,
      post: async (body) => {
        const posted = (await rest.post(Routes.channelMessages(channelId), { body })) as {
          id: string;
          timestamp?: string;
        };
        return {
          id: posted.id,
          ...(posted.timestamp && { timestamp: new Date(posted.timestamp).toISOString() }),
        };
      },
      edit: async (id, body) => {
        await rest.patch(Routes.channelMessage(channelId, id), { body: { content: body.content } });
      },
      editEveryMs: 1250, // Discord allows 5 edits in 5 s in a channel: 4 paced, the final one
      retryAfterMs: () => undefined,
      fail: (error) =>
        toColloquyError(error, `a message in ${channelId}`, {
          conversationId: message.conversationId,
        }),
    },
    options,
  );
}
