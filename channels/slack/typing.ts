import type { webApi } from '@slack/bolt';
import type { OutboundMessage, TypingIndicator } from '../../src/channel.js';

/**
 * What people see on Slack while an agent works.
 *
 * @example
 * ```ts
 * new SlackChannel({ token, signingSecret, typing: { status: 'is looking it up…', reaction: false } });
 * ```
 */
export interface SlackTypingOptions {
  /** The thread status shown under the thread's messages (default `is thinking…`). */
  status?: string;
  /**
   * The emoji the bot reacts with to a message it answers outside a thread (a DM's top level),
   * or where the thread status is refused, removed when it is done (default `eyes`); false:
   * none.
   */
  reaction?: string | false;
}

/**
 * Slack has no typing indicator for bots; what Slack users see from AI apps is the thread
 * status (`assistant.threads.setStatus`: "is thinking…" under the thread, cleared when the app
 * posts in it, or after two minutes). Replies in a thread (a channel mention's, an assistant
 * thread's) get that status; a reply at a DM's top level, or one whose status Slack refuses,
 * gets a reaction on the message answered instead, removed when the run ends.
 *
 * @example
 * ```ts
 * const typing = slackTyping(() => app.client, {});
 * await typing.show(outboundFor(turn, '', place));
 * ```
 */
export function slackTyping(
  client: () => webApi.WebClient,
  options: SlackTypingOptions = {},
): TypingIndicator {
  const status = options.status ?? 'is thinking…';
  const reaction = options.reaction ?? 'eyes';
  /** The messages reacted to, by `<channel>:<ts>`. */
  const reacted = new Set<string>();
  const keyOf = (place: OutboundMessage) => `${place.channelId}:${place.replyToMessageId}`;
  const setStatus = (place: OutboundMessage, text: string) =>
    client().assistant.threads.setStatus({
      channel_id: place.channelId,
      thread_ts: place.threadId!,
      status: text,
    });
  return {
    // The status times out after two minutes without a message from the app.
    repeatMs: 60_000,
    async show(place) {
      if (place.threadId !== undefined) {
        try {
          await setStatus(place, status);
          return;
        } catch (error) {
          if (reaction === false) throw error;
        }
      }
      if (reaction === false || place.replyToMessageId === undefined) return;
      if (reacted.has(keyOf(place))) return;
      reacted.add(keyOf(place));
      await client().reactions.add({
        channel: place.channelId,
        timestamp: place.replyToMessageId,
        name: reaction,
      });
    },
    async clear(place) {
      if (reacted.delete(keyOf(place))) {
        await client().reactions.remove({
          channel: place.channelId,
          timestamp: place.replyToMessageId!,
          name: reaction as string,
        });
      } else if (place.threadId !== undefined) await setStatus(place, '');
    },
  };
}
