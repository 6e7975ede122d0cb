/**
 * `conversations.history` and `conversations.replies` as Slack answers them, over what the
 * fake holds: the messages people wrote through it and the bot's posts. Message metadata is
 * returned only with `include_all_metadata`. Internal to `FakeSlack`.
 */
import type { FakeSlackMetadata, FakeSlackPost, FakeSlackWritten } from './types.js';

/** What a conversation read needs from the fake. */
export interface HistoryState {
  readonly bot: { userId: string; botId: string };
  readonly channels: ReadonlyMap<string, string>;
  readonly posted: readonly FakeSlackPost[];
  readonly written: readonly FakeSlackWritten[];
}

interface Listed {
  type: 'message';
  user: string;
  text: string;
  ts: string;
  thread_ts?: string;
  bot_id?: string;
  metadata?: FakeSlackMetadata;
}

/** The answer to `conversations.history` (newest first) or `conversations.replies` (parent first). */
export function readConversation(
  state: HistoryState,
  method: 'conversations.history' | 'conversations.replies',
  params: Record<string, unknown>,
): Record<string, unknown> {
  const channel = String(params.channel ?? '');
  if (!channel.startsWith('D') && !state.channels.has(channel)) {
    return { ok: false, error: 'channel_not_found' };
  }
  const withMetadata = flag(params.include_all_metadata);
  const all = listed(state, channel, withMetadata).sort((a, b) => compareTs(a.ts, b.ts));
  const inRange = inTimeRange(params);
  let messages: Listed[];
  if (method === 'conversations.history') {
    messages = all
      .filter((m) => m.thread_ts === undefined || m.thread_ts === m.ts)
      .filter(inRange)
      .reverse();
  } else {
    const ts = String(params.ts ?? '');
    const parent = all.find((m) => m.ts === ts);
    if (parent === undefined) return { ok: false, error: 'thread_not_found' };
    const replies = all.filter((m) => m.thread_ts === ts && m.ts !== ts).filter(inRange);
    messages = [{ ...parent, ...(replies.length > 0 && { thread_ts: ts }) }, ...replies];
  }
  const limit = Math.min(
    Math.max(Number(params.limit ?? (method === 'conversations.history' ? 100 : 1000)) || 1, 1),
    999,
  );
  const offset = params.cursor
    ? Number(Buffer.from(String(params.cursor), 'base64').toString())
    : 0;
  const page = messages.slice(offset, offset + limit);
  const more = offset + limit < messages.length;
  return {
    ok: true,
    messages: page,
    has_more: more,
    response_metadata: {
      next_cursor: more ? Buffer.from(String(offset + limit)).toString('base64') : '',
    },
  };
}

/** Every message of `channel` as Slack lists it. */
function listed(state: HistoryState, channel: string, withMetadata: boolean): Listed[] {
  const people = state.written
    .filter((m) => m.channel === channel)
    .map(({ user, text, ts, thread_ts }) => ({
      type: 'message' as const,
      user,
      text,
      ts,
      ...(thread_ts !== undefined && { thread_ts }),
    }));
  const bot = state.posted
    .filter((post) => post.channel === channel && post.visibleTo === undefined)
    .map(({ text, ts, thread_ts, metadata }) => ({
      type: 'message' as const,
      user: state.bot.userId,
      bot_id: state.bot.botId,
      text,
      ts,
      ...(thread_ts !== undefined && { thread_ts }),
      ...(withMetadata && metadata !== undefined && { metadata }),
    }));
  return [...people, ...bot];
}

/** `oldest` / `latest` (exclusive unless `inclusive`), as Slack filters a read. */
function inTimeRange(params: Record<string, unknown>): (message: Listed) => boolean {
  const inclusive = flag(params.inclusive);
  const oldest = params.oldest === undefined ? undefined : String(params.oldest);
  const latest = params.latest === undefined ? undefined : String(params.latest);
  return ({ ts }) => {
    if (oldest !== undefined && compareTs(ts, oldest) < (inclusive ? 0 : 1)) return false;
    if (latest !== undefined && compareTs(ts, latest) > (inclusive ? 0 : -1)) return false;
    return true;
  };
}

/** Orders two Slack `ts` values (seconds, then the sequence after the dot). */
function compareTs(a: string, b: string): number {
  const [as = '0', af = ''] = a.split('.');
  const [bs = '0', bf = ''] = b.split('.');
  return Number(as) - Number(bs) || Number(af.padEnd(6, '0')) - Number(bf.padEnd(6, '0'));
}

/** A boolean parameter, sent as JSON `true` or a form's `'true'` / `'1'`. */
function flag(value: unknown): boolean {
  return value === true || value === 'true' || value === '1' || value === 1;
}
