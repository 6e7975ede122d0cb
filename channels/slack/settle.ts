/**
 * Finding a reply again on Slack: each posted part carries message metadata naming the reply
 * and the part, and a reply streamed with Slack's own methods gets it when the stream stops.
 * After a crash the conversation is read back (with `include_all_metadata`) from the turn the
 * reply answers; a stream the crash left running (the bot's message there without colloquy's
 * metadata, started when the reply was recorded and showing the start of its text) is stopped,
 * set to the recorded text and marked.
 */
import type { App } from '@slack/bolt';
import type {
  OutboundMessage,
  SendOptions,
  SentMessage,
  UnsettledReply,
} from '../../src/channel.js';
import { PlatformError } from '../../src/errors.js';
import { toColloquyError } from './format.js';
import type { SlackSelf } from './parse.js';

/** The metadata `event_type` of colloquy's replies. */
export const REPLY_EVENT_TYPE = 'colloquy_reply';

/**
 * Slack message metadata for part `part` of the reply `replyId`; `streamed` when the message
 * holds the whole reply (streamed with Slack's own methods) rather than one part of it.
 */
export interface ReplyMetadata {
  event_type: typeof REPLY_EVENT_TYPE;
  event_payload: { reply_id: string; part: number; streamed?: boolean };
}

/**
 * The metadata that marks part `part` of the reply `replyId` (the whole reply, `streamed`).
 *
 * @example
 * ```ts
 * await client.chat.postMessage({ channel, text, metadata: replyMetadata(replyId, 0) });
 * ```
 */
export function replyMetadata(replyId: string, part: number, streamed = false): ReplyMetadata {
  return {
    event_type: REPLY_EVENT_TYPE,
    event_payload: { reply_id: replyId, part, ...(streamed && { streamed: true }) },
  };
}

/** What a read of the conversation found of one reply. */
export interface FoundReply {
  /** The `ts` of each part marked with the reply's metadata, by part index. */
  parts: Map<number, string>;
  /** True when part 0 is a stream that stopped: one message holding the whole reply. */
  streamed: boolean;
  /** The bot's messages after the turn answered that carry no colloquy metadata, oldest first. */
  unmarked: UnmarkedMessage[];
}

/** A message of the bot's without colloquy metadata: its `ts` and the text Slack lists. */
export interface UnmarkedMessage {
  ts: string;
  text: string;
}

/** Most messages one read of the conversation answers. */
const PAGE = 200;
/**
 * How far around the recorded time a reply is looked for: Slack's clock and the bot's may
 * differ by this much (a stream starts as soon as its reply is recorded).
 */
const SKEW_MS = 60_000;

/**
 * What Slack has of `message` (a reply, by its `replyId`), read from the thread
 * (`conversations.replies`) or the channel (`conversations.history`) since the turn it answers
 * (`replyToMessageId`), or since shortly before `recordedAt`. Throws a colloquy error when
 * Slack cannot be read.
 *
 * @example
 * ```ts
 * const { parts } = await findReply(app.client, message, recordedAt, self); // Map { 0 => '1712345678.000200' }
 * ```
 */
export async function findReply(
  client: App['client'],
  message: OutboundMessage,
  recordedAt: string,
  self?: SlackSelf,
): Promise<FoundReply> {
  const found: FoundReply = { parts: new Map(), streamed: false, unmarked: [] };
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
      const { ts } = posted;
      if (typeof ts !== 'string' || ts === threadId || compareTs(ts, oldest) <= 0) continue;
      const metadata = posted.metadata as Partial<ReplyMetadata> | undefined;
      if (metadata?.event_type !== REPLY_EVENT_TYPE) {
        const mine = posted.user === self?.userId || posted.bot_id === self?.botId;
        if (self !== undefined && mine)
          found.unmarked.push({ ts, text: String(posted.text ?? '') });
        continue;
      }
      const payload = metadata.event_payload;
      if (payload?.reply_id !== replyId || !Number.isInteger(payload.part)) continue;
      found.parts.set(payload.part, ts);
      if (payload.part === 0 && payload.streamed === true) found.streamed = true;
    }
    cursor = page.response_metadata?.next_cursor || undefined;
  } while (cursor !== undefined);
  found.unmarked.sort((a, b) => compareTs(a.ts, b.ts));
  return found;
}

/** What settling a Slack reply needs from the channel. */
export interface SlackSettleContext {
  client: App['client'];
  /** The bot, whose unmarked messages may be streams a crash left running. */
  self?: SlackSelf;
  /** The text of each part of a reply (the split `send` uses). */
  parts(text: string): string[];
  /** A reply's text as the `markdown_text` of a stream (the form `stream` sends). */
  markdown?(text: string): string;
  /** Posts a reply, skipping the parts Slack has. */
  send(message: OutboundMessage, options: SendOptions): Promise<SentMessage>;
}

/**
 * Settles a reply a crash left unconfirmed: reads the thread (or the channel) back from the
 * turn it answers, with message metadata. A reply streamed with Slack's own methods is one
 * message: found stopped (by its metadata), it is recorded; found still streaming (its `ts`
 * confirmed before the crash, or else a guess: see `runningStream`), it is stopped, set to the
 * recorded text and marked, then recorded. A posted reply's parts are recorded by their
 * metadata, and the parts Slack lacks are posted. Needs the `*:history` scope of the conversation's kind (`channels:history`, `groups:history`,
 * `im:history`, `mpim:history`).
 *
 * @example
 * ```ts
 * const sent = await settleSlackReply({ client, self, parts, send }, { message, confirmed: [], recordedAt });
 * ```
 */
export async function settleSlackReply(
  context: SlackSettleContext,
  { message, confirmed, recordedAt }: UnsettledReply,
): Promise<SentMessage | undefined> {
  if (message.replyId === undefined) return undefined;
  const found = await findReply(context.client, message, recordedAt, context.self);
  const running = found.streamed
    ? undefined
    : await runningStream(context, message, found, confirmed, recordedAt);
  const streamed = found.streamed ? found.parts.get(0) : running;
  if (streamed !== undefined) {
    return confirmed.length > 0
      ? { messageIds: [] }
      : { messageIds: [streamed], timestamp: timeOf(streamed) };
  }
  const messageIds: string[] = [];
  while (found.parts.has(confirmed.length + messageIds.length)) {
    messageIds.push(found.parts.get(confirmed.length + messageIds.length)!);
  }
  const rest = await context.send(message, { skipParts: confirmed.length + messageIds.length });
  const first = messageIds[0];
  if (first === undefined) return rest;
  return { messageIds: [...messageIds, ...rest.messageIds], timestamp: timeOf(first) };
}

/**
 * Finds, stops and sets the stream of the reply a crash left running, if any; answers its
 * `ts`. The `ts` confirmed before the crash is taken when Slack lists it unmarked. With none
 * confirmed, the guess (`guessedStream`) is taken only when `chat.stopStream` stops it (it was
 * a stream), or when Slack says it is not streaming and its text is the start of the recorded
 * text (a stream Slack stopped itself); any other message is left as it is.
 */
async function runningStream(
  context: SlackSettleContext,
  message: OutboundMessage,
  found: FoundReply,
  confirmed: readonly string[],
  recordedAt: string,
): Promise<string | undefined> {
  const first = confirmed[0];
  if (first !== undefined) {
    if (confirmed.length !== 1 || !found.unmarked.some(({ ts }) => ts === first)) return undefined;
    await finishStream(context, message, first, true);
    return first;
  }
  if (found.parts.size > 0) return undefined;
  const texts = recordedTexts(context, message.content);
  for (const candidate of guessedStream(found.unmarked, recordedAt, texts)) {
    const shown = normalised(candidate.text);
    const start = shown !== '' && texts.some((text) => text.startsWith(shown));
    if (await finishStream(context, message, candidate.ts, start)) return candidate.ts;
  }
  return undefined;
}

/**
 * The bot's unmarked messages that may be the reply's stream, oldest first: posted within
 * `SKEW_MS` either side of the time the reply was recorded (the stream starts right after),
 * whose text and the recorded text (`texts`, normalised) are one the start of the other (the
 * record holds what was shown, or the first words, which the stream may have outgrown).
 */
function guessedStream(
  unmarked: readonly UnmarkedMessage[],
  recordedAt: string,
  texts: readonly string[],
): UnmarkedMessage[] {
  const since = slackTs(Date.parse(recordedAt) - SKEW_MS);
  const until = slackTs(Date.parse(recordedAt) + SKEW_MS);
  return unmarked.filter(({ ts, text }) => {
    if (compareTs(ts, since) < 0 || compareTs(ts, until) > 0) return false;
    const shown = normalised(text);
    return texts.some((recorded) => recorded.startsWith(shown) || shown.startsWith(recorded));
  });
}

/** The recorded text as a stream shows it and as it is, normalised (see `normalised`). */
function recordedTexts(context: SlackSettleContext, content: string): string[] {
  const texts = [normalised(content)];
  if (context.markdown !== undefined) texts.push(normalised(context.markdown(content)));
  return texts.filter((text) => text !== '');
}

/** A text with runs of white space as one space, trimmed: how it compares to another. */
function normalised(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Stops a stream a crash left running, then sets it to the recorded text, marked as the whole
 * reply; answers false, changing nothing, when Slack says `ts` is not streaming and
 * `notStreaming` (the message may be set although it is not streaming: a stream Slack
 * stopped) is false.
 */
async function finishStream(
  { client, parts }: SlackSettleContext,
  message: OutboundMessage,
  ts: string,
  notStreaming: boolean,
): Promise<boolean> {
  const channel = message.channelId;
  const metadata = replyMetadata(message.replyId!, 0, true);
  const fail = (error: unknown, method: string) =>
    toColloquyError(error, { method, conversationId: message.conversationId });
  try {
    await client.chat.stopStream({ channel, ts, metadata });
  } catch (error) {
    const refused = fail(error, 'chat.stopStream');
    if (!(refused instanceof PlatformError) || refused.code !== 'message_not_in_streaming_state') {
      throw refused;
    }
    if (!notStreaming) return false;
  }
  try {
    await client.chat.update({ channel, ts, text: parts(message.content).join('\n'), metadata });
  } catch (error) {
    throw fail(error, 'chat.update');
  }
  return true;
}

/** When a Slack `ts` was (ISO 8601 UTC). */
function timeOf(ts: string): string {
  return new Date(Number(ts) * 1000).toISOString();
}

/** Orders two Slack `ts` values (seconds, then the sequence after the dot). */
function compareTs(a: string, b: string): number {
  const [as = '0', af = ''] = a.split('.');
  const [bs = '0', bf = ''] = b.split('.');
  return Number(as) - Number(bs) || Number(af.padEnd(6, '0')) - Number(bf.padEnd(6, '0'));
}

/** A Slack `ts` (seconds, six decimals) for a time in ms. */
function slackTs(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(6);
}
