/**
 * What `FakeSlack` does for replies shown as they are written: the streaming methods
 * (`chat.startStream`, `chat.appendStream`, `chat.stopStream`) with the errors Slack answers
 * them with, the refusal to `chat.update` a message still streaming, and the rate limits of
 * the methods that change a message (HTTP 429, `ratelimited`, `Retry-After`). Internal to
 * `FakeSlack`.
 */
import { EditWindow, type EditLimit } from '../../testing/edit-limit.js';
import { readMetadata, type WebApiState } from './web-api.js';

/** Most characters of `markdown_text` one streaming call takes. */
const MARKDOWN_LIMIT = 12_000;

/** Calls a minute Slack's tiers allow the methods that change a message (per workspace). */
const DEFAULT_LIMITS: Record<string, EditLimit> = {
  'chat.update': { calls: 50, perMs: 60_000 },
  'chat.appendStream': { calls: 100, perMs: 60_000 },
};

/** The streams and edit limits of one `FakeSlack`. */
export class FakeSlackStreams {
  readonly #state: WebApiState;
  readonly #supported: boolean;
  readonly #windows = new Map<string, EditWindow>();

  constructor(state: WebApiState, options: { streaming?: boolean; editLimit?: EditLimit }) {
    this.#state = state;
    this.#supported = options.streaming !== false;
    for (const [method, limit] of Object.entries(DEFAULT_LIMITS)) {
      this.#windows.set(method, new EditWindow(options.editLimit ?? limit));
    }
  }

  /** Seconds to wait (`Retry-After`) when `method` is past its rate limit, else undefined. */
  retryAfter(method: string): number | undefined {
    const wait = this.#windows.get(method)?.take(method);
    return wait === undefined ? undefined : Math.max(1, Math.ceil(wait / 1000));
  }

  /** The answer to a streaming call, or to a `chat.update` of a streaming message; else undefined. */
  answer(method: string, params: Record<string, unknown>): Record<string, unknown> | undefined {
    switch (method) {
      case 'chat.startStream':
        return this.#start(params);
      case 'chat.appendStream':
      case 'chat.stopStream':
        return this.#continue(method, params);
      case 'chat.update': {
        const post = this.#find(params);
        return post?.streaming === true ? { ok: false, error: 'cant_update_message' } : undefined;
      }
      default:
        return undefined;
    }
  }

  #start(params: Record<string, unknown>): Record<string, unknown> {
    if (!this.#supported) return { ok: false, error: 'unknown_method' };
    const channel = String(params.channel ?? '');
    const dm = channel.startsWith('D');
    if (!dm && !this.#state.channels.has(channel)) return { ok: false, error: 'channel_not_found' };
    const threadTs = typeof params.thread_ts === 'string' ? params.thread_ts : '';
    if (!/^\d+\.\d+$/.test(threadTs)) return { ok: false, error: 'invalid_arguments' };
    if (!dm && typeof params.recipient_user_id !== 'string') {
      return { ok: false, error: 'missing_recipient_user_id' };
    }
    if (!dm && typeof params.recipient_team_id !== 'string') {
      return { ok: false, error: 'missing_recipient_team_id' };
    }
    const text = typeof params.markdown_text === 'string' ? params.markdown_text : '';
    if (text.length > MARKDOWN_LIMIT) return { ok: false, error: 'msg_too_long' };
    const ts = this.#state.nextTs();
    this.#state.statuses.delete(`${channel}:${threadTs}`);
    this.#state.posted.push({ channel, text, ts, thread_ts: threadTs, params, streaming: true });
    this.#state.onPosted();
    return { ok: true, channel, ts };
  }

  #continue(method: string, params: Record<string, unknown>): Record<string, unknown> {
    const post = this.#find(params);
    if (post === undefined) return { ok: false, error: 'message_not_found' };
    if (post.streaming !== true) return { ok: false, error: 'message_not_in_streaming_state' };
    const text = params.markdown_text;
    if (method === 'chat.appendStream' && typeof text !== 'string') {
      return { ok: false, error: 'invalid_arguments' };
    }
    if (typeof text === 'string' && text.length > MARKDOWN_LIMIT) {
      return { ok: false, error: 'msg_too_long' };
    }
    let metadata;
    if (method === 'chat.stopStream') {
      metadata = readMetadata(params.metadata);
      if (typeof metadata === 'string') return { ok: false, error: metadata };
    }
    post.text += typeof text === 'string' ? text : '';
    if (method === 'chat.stopStream') {
      post.streaming = false;
      if (metadata !== undefined) post.metadata = metadata;
    }
    this.#state.onPosted();
    return { ok: true, channel: post.channel, ts: post.ts };
  }

  #find(params: Record<string, unknown>) {
    return this.#state.posted.find((p) => p.channel === params.channel && p.ts === params.ts);
  }
}
