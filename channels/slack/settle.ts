/**
 * Finding a reply's parts again on Slack: each part is posted with message metadata naming
 * the reply and the part, and after a crash the conversation is read back (with
 * `include_all_metadata`) from the turn the reply answers.
 */
import type { App } from '@slack/bolt';
import type {
  OutboundMessage,
  SendOptions,
  SentMessage,
  UnsettledReply,
} from '../../src/channel.js';
import { toColloquyError } from './format.js';

/** The metadata `event_type` of colloquy's replies. */
export const REPLY_EVENT_TYPE = 'colloquy_reply';

/** Slack message metadata for part `part` of the reply `replyId`. */
export interface ReplyMetadata {
  event_type: typeof REPLY_EVENT_TYPE;
  event_payload: { reply_id: string; part: number };
}

/**
 * The metadata that marks part `part` of the reply `replyId`.
 *
 * @example
 * ```ts
 * await client.chat.postMessage({ channel, text, metadata: replyMetadata(replyId, 0) });
 * ```
 */
export function replyMetadata(replyId: string, part: number): ReplyMetadata {
  return { event_type: REPLY_EVENT_TYPE, event_payload: { reply_id: replyId, part } };
}

/** Most messages one read of the conversation answers. */
const PAGE = 200;
/** How far before the recorded time a reply with no inbound `ts` is looked for (clock skew). */
const SKEW_MS = 60_000;

/**
 * The `ts` of every part of `message` (by part index) that Slack has, read from the thread
 * (`conversations.replies`) or the channel (`conversations.history`) since the turn it answers
 * (`replyToMessageId`), or since shortly before `recordedAt`. Throws a colloquy error when
 * Slack cannot be read.
 *
 * @example
 * ```ts
 * const parts = await postedParts(app.client, message, recordedAt); // Map { 0 => '1712345678.000200' }
 * ```
 */
export async function postedParts(
  client: App['client'],
  message: OutboundMessage,
  recordedAt: string,
): Promise<Map<number, string>> {
  const found = new Map<number, string>();
  const { replyId, channelId: channel, threadId } = message;
  if (replyId === undefined) return found;
  const oldest = message.replyToMessageId ?? slackTs(Date.parse(recordedAt) - SKEW_MS);
  const method = threadId === undefined ? 'conversations.history' : 'conversations.replies';
  let cursor: string | undefined;
  do {
    const query = { channel, oldest, include_all_metadata: true, limit: PAGE, cursor };
    let page;
    try {
      page =
        threadId === undefined
          ? await client.conversations.history(query)
          : await client.conversations.replies({ ...query, ts: threadId });
    } catch (error) {
      throw toColloquyError(error, { method, conversationId: message.conversationId });
    }
    for (const posted of page.messages ?? []) {
      const part = partOf(posted as { metadata?: unknown }, replyId);
      if (part !== undefined && typeof posted.ts === 'string') found.set(part, posted.ts);
    }
    cursor = page.response_metadata?.next_cursor || undefined;
  } while (cursor !== undefined);
  return found;
}

/**
 * Settles a reply a crash left unconfirmed: reads the thread (or the channel) back from the
 * turn it answers, with message metadata, takes the `ts` of each part found there, and posts
 * (`send`) the parts Slack does not have. Needs the `*:history` scope of the conversation's
 * kind (`channels:history`, `groups:history`, `im:history`, `mpim:history`).
 *
 * @example
 * ```ts
 * const sent = await settleSlackReply(app.client, { message, confirmed: [], recordedAt }, send);
 * ```
 */
export async function settleSlackReply(
  client: App['client'],
  { message, confirmed, recordedAt }: UnsettledReply,
  send: (message: OutboundMessage, options: SendOptions) => Promise<SentMessage>,
): Promise<SentMessage | undefined> {
  if (message.replyId === undefined) return undefined;
  const found = await postedParts(client, message, recordedAt);
  const messageIds: string[] = [];
  while (found.has(confirmed.length + messageIds.length)) {
    messageIds.push(found.get(confirmed.length + messageIds.length)!);
  }
  const rest = await send(message, { skipParts: confirmed.length + messageIds.length });
  const first = messageIds[0];
  if (first === undefined) return rest;
  const timestamp = new Date(Number(first) * 1000).toISOString();
  return { messageIds: [...messageIds, ...rest.messageIds], timestamp };
}

/** The part of `replyId` a message's metadata names, if it names one. */
function partOf(posted: { metadata?: unknown }, replyId: string): number | undefined {
  const metadata = posted.metadata as Partial<ReplyMetadata> | undefined;
  if (metadata?.event_type !== REPLY_EVENT_TYPE) return undefined;
  const payload = metadata.event_payload;
  if (payload?.reply_id !== replyId || !Number.isInteger(payload.part)) return undefined;
  return payload.part;
}

/** A Slack `ts` (seconds, six decimals) for a time in ms. */
function slackTs(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(6);
}
