/**
 * A Slack reply shown as it is written: Slack's own streaming (`chat.startStream`,
 * `chat.appendStream`, `chat.stopStream`) in a thread — DM and assistant threads, and channel
 * threads with the person answered as the recipient — and elsewhere, or where the workspace
 * refuses to stream, a message posted and then changed with `chat.update`. Rate limits (429
 * `ratelimited`, `Retry-After`) are waited out by the Web API client itself.
 */
import type { App } from '@slack/bolt';
import type {
  OutboundMessage,
  ReplyStream,
  SentMessage,
  StreamOptions,
} from '../../src/channel.js';
import { PlatformError } from '../../src/errors.js';
import type { PostedPart } from '../shared/platform.js';
import { catchUps, editedStream, pauses } from '../shared/stream.js';
import { mayHavePosted, toColloquyError } from './format.js';
import { findReply, replyMetadata } from './settle.js';

/** Least time between two `chat.update` calls of one message (Tier 3: about one a second). */
const UPDATE_EVERY_MS = 1000;
/** Least time between two appends to a stream (Tier 4: about 100 a minute). */
const APPEND_EVERY_MS = 600;
/** Most characters of `markdown_text` one streaming call takes. */
const MARKDOWN_LIMIT = 12_000;
/** Refusals of `chat.startStream` that hold for the whole workspace, not just the place. */
const WORKSPACE_REFUSALS = new Set([
  'unknown_method',
  'not_allowed_token_type',
  'missing_scope',
  'feature_not_enabled',
]);

/** How the channel streams: its client, how it formats, and what it learnt of the workspace. */
export interface SlackStreamContext {
  client: App['client'];
  /** The text of each part of a posted reply (the same split `send` uses). */
  parts(text: string): string[];
  /** An answer as the `markdown_text` of a stream (broadcast mentions made harmless). */
  markdown(text: string): string;
  /**
   * Where Slack refused to stream (`team:<id>` for a workspace without the methods,
   * `channel:<id>` for a place it refused): later replies there are posted and updated.
   */
  refused: Set<string>;
}

/**
 * A `ReplyStream` for `message` on Slack: native streaming where Slack offers it for the place
 * (a thread, with the person as recipient outside a DM), else post then `chat.update`.
 *
 * @example
 * ```ts
 * const reply = slackStream({ client: app.client, parts, markdown, refused }, outbound, { recipientId });
 * ```
 */
export function slackStream(
  context: SlackStreamContext,
  message: OutboundMessage,
  options: StreamOptions = {},
): ReplyStream {
  const user = options.recipientId?.replace(/^slack:/, '');
  const team = /^slack:([^:]+):/.exec(message.conversationId)?.[1];
  const dm = message.channelId.startsWith('D');
  const streamable =
    !context.refused.has(`team:${team}`) &&
    !context.refused.has(`channel:${message.channelId}`) &&
    message.threadId !== undefined &&
    (dm || (user !== undefined && team !== undefined));
  if (!streamable) return updatedStream(context, message, options);
  return nativeStream(context, message, options, dm ? {} : { user: user!, team: team! });
}

/**
 * Posts part `index` of a reply with `chat.postMessage` (with `blocks`, if given), in its
 * thread, with the message metadata that names the reply and the part (by which a crash's restart finds it).
 * A post whose answer is lost after it may have reached Slack ({@link mayHavePosted}) is looked
 * for by that metadata: found, its `ts` is the part's; not found, it is posted again, once.
 *
 * @example
 * ```ts
 * const { id } = await postSlackPart(app.client, outbound, 'The order ships tomorrow.', 0);
 * ```
 */
export async function postSlackPart(
  client: App['client'],
  message: OutboundMessage,
  text: string,
  index: number,
  blocks?: object[],
): Promise<PostedPart> {
  if (message.visibleTo !== undefined) {
    // Shown to one person only: Slack keeps no copy to find again, so it carries no metadata.
    const { message_ts: ts } = await client.chat.postEphemeral({
      channel: message.channelId,
      user: message.visibleTo,
      text,
      ...(blocks !== undefined && { blocks }),
      ...(message.threadId !== undefined && { thread_ts: message.threadId }),
    });
    return typeof ts === 'string' ? { id: ts, timestamp: slackTsTime(ts) } : { id: undefined };
  }
  const post = () =>
    client.chat.postMessage({
      channel: message.channelId,
      text,
      ...(blocks !== undefined && { blocks }),
      ...(message.threadId !== undefined && { thread_ts: message.threadId }),
      ...(message.replyId !== undefined && { metadata: replyMetadata(message.replyId, index) }),
    });
  const postedAt = new Date().toISOString();
  let ts: unknown;
  try {
    ({ ts } = await post());
  } catch (error) {
    if (message.replyId === undefined || !mayHavePosted(error)) throw error;
    const found = await findReply(client, message, postedAt).catch(() => {
      throw error; // Slack cannot be read either: the part may or may not be there
    });
    ts = found.parts.get(index) ?? (await post()).ts;
  }
  if (typeof ts !== 'string') return { id: undefined };
  return { id: ts, timestamp: slackTsTime(ts) };
}

function slackTsTime(ts: string): string {
  return new Date(Number(ts) * 1000).toISOString();
}

/** Post the first words, then `chat.update` as the answer grows (see `editedStream`). */
function updatedStream(
  { client, parts }: SlackStreamContext,
  message: OutboundMessage,
  options: StreamOptions,
): ReplyStream {
  const channel = message.channelId;
  return editedStream(
    {
      parts: (text) => parts(text),
      textOf: (text) => text,
      post: (text, index) => postSlackPart(client, message, text, index),
      edit: async (ts, text) => {
        await client.chat.update({ channel, ts, text });
      },
      editEveryMs: UPDATE_EVERY_MS,
      retryAfterMs: () => undefined,
      fail: (error, _index, call) =>
        toColloquyError(error, {
          method: call === 'post' ? 'chat.postMessage' : 'chat.update',
          conversationId: message.conversationId,
        }),
    },
    options,
  );
}

/**
 * Slack's own streaming: `chat.startStream` with the first words, `chat.appendStream` with
 * what the model wrote since (at most every 600 ms), `chat.stopStream` with the rest and the
 * reply's metadata (by which a crash's restart finds it). An answer that changed other than by
 * growing is set whole with `chat.update` once the stream stopped. When Slack refuses to start
 * the stream (the workspace or the place has no streaming), the reply is posted and updated
 * instead, and the channel remembers it. The answer so far is recorded (`options.showing`)
 * before each call that shows more of it.
 */
function nativeStream(
  context: SlackStreamContext,
  message: OutboundMessage,
  options: StreamOptions,
  recipient: { user?: string; team?: string },
): ReplyStream {
  const { client } = context;
  const channel = message.channelId;
  const threadTs = message.threadId!;
  const { pause, wake } = pauses();
  let ts: string | undefined;
  let streamed = '';
  let latest = ''; // the answer so far, as markdown_text
  let raw = ''; // the answer so far, as the agent wrote it
  let final = false;
  let fallback: ReplyStream | undefined;
  let appendedAt = 0;
  const fail = (error: unknown, method: string) =>
    toColloquyError(error, { method, conversationId: message.conversationId });

  /** Has the answer so far recorded before a call shows it (`options.showing`). */
  const record = (ids: string[]) => options.showing?.({ messageIds: ids, shown: raw });

  const start = async (text: string) => {
    await record([]);
    try {
      const started = await client.chat.startStream({
        channel,
        thread_ts: threadTs,
        markdown_text: text.slice(0, MARKDOWN_LIMIT),
        ...(recipient.user !== undefined && { recipient_user_id: recipient.user }),
        ...(recipient.team !== undefined && { recipient_team_id: recipient.team }),
      });
      ts = started.ts;
      streamed = text.slice(0, MARKDOWN_LIMIT);
      options.progress?.({ messageIds: ts === undefined ? [] : [ts], shown: streamed });
    } catch (error) {
      const refused = fail(error, 'chat.startStream');
      if (!(refused instanceof PlatformError) || refused.transient === true) throw refused;
      // Slack refused to stream: post and update instead, from now on in this workspace (it
      // has no streaming) or in this channel (the place refused it).
      const team = /^slack:([^:]+):/.exec(message.conversationId)?.[1];
      const workspaceWide = WORKSPACE_REFUSALS.has(refused.code ?? '');
      context.refused.add(workspaceWide ? `team:${team}` : `channel:${channel}`);
      fallback = updatedStream(context, message, options);
      fallback.update(raw);
    }
  };

  /** Starts the stream, then appends what the model wrote since, until nothing is left. */
  const catchUp = async () => {
    for (;;) {
      if (ts === undefined) {
        await start(latest);
        if (fallback !== undefined || ts === undefined) return;
      }
      // Once the whole answer is known, the rest goes with `chat.stopStream`.
      if (final || latest.length <= streamed.length || !latest.startsWith(streamed)) return;
      const wait = appendedAt + APPEND_EVERY_MS - Date.now();
      if (wait > 0) await pause(wait);
      if (final || !latest.startsWith(streamed)) return;
      const slice = latest.slice(streamed.length, streamed.length + MARKDOWN_LIMIT);
      await record([ts]);
      await client.chat.appendStream({ channel, ts, markdown_text: slice });
      streamed += slice;
      appendedAt = Date.now();
      options.progress?.({ messageIds: [ts], shown: streamed });
    }
  };

  const catching = catchUps(catchUp);

  /** Stops the stream with the rest of `text`, and sets it whole when it did not just grow. */
  const stop = async (text: string): Promise<SentMessage> => {
    const markdown = context.markdown(text);
    const rest = markdown.startsWith(streamed) ? markdown.slice(streamed.length) : '';
    const slices: string[] = [];
    for (let at = 0; at < rest.length; at += MARKDOWN_LIMIT) {
      slices.push(rest.slice(at, at + MARKDOWN_LIMIT));
    }
    const last = slices.pop();
    await record([ts!]);
    for (const slice of slices) {
      await client.chat.appendStream({ channel, ts: ts!, markdown_text: slice });
    }
    await client.chat.stopStream({
      channel,
      ts: ts!,
      ...(last !== undefined && { markdown_text: last }),
      ...(message.replyId !== undefined && { metadata: replyMetadata(message.replyId, 0, true) }),
    });
    if (!markdown.startsWith(streamed)) {
      await client.chat.update({ channel, ts: ts!, text: context.parts(text).join('\n') });
    }
    return { messageIds: [ts!], timestamp: new Date(Number(ts) * 1000).toISOString() };
  };

  return {
    update(text) {
      if (final) return;
      raw = text;
      latest = context.markdown(text);
      if (fallback !== undefined) return fallback.update(text);
      catching.kick();
    },
    async end(text) {
      raw = text;
      latest = context.markdown(text);
      final = true;
      wake();
      await catching.settled();
      if (fallback === undefined && ts === undefined && !catching.failed) {
        catching.kick(); // the stream has not started yet: start it with the whole answer
        await catching.settled();
      }
      if (fallback !== undefined) return fallback.end(text);
      try {
        catching.rethrow();
      } catch (error) {
        throw fail(error, 'chat.appendStream');
      }
      try {
        return await stop(text);
      } catch (error) {
        throw fail(error, 'chat.stopStream');
      }
    },
  };
}
