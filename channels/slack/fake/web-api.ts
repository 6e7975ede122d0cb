/**
 * The Web API methods `FakeSlack` serves, answered the way Slack documents them, plus the
 * request signing and body parsing it needs. Internal to `FakeSlack`.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { readConversation } from './history.js';
import { blocksValid } from './blocks.js';
import type {
  FakeSlackMetadata,
  FakeSlackPost,
  FakeSlackReaction,
  FakeSlackUser,
  FakeSlackWritten,
} from './types.js';

/** What the Web API answers read from the fake. */
export interface WebApiState {
  readonly teamId: string;
  readonly teamName: string;
  readonly enterprise: { id: string; orgWideInstall?: boolean } | undefined;
  readonly bot: { userId: string; botId: string; name: string };
  readonly users: ReadonlyMap<string, FakeSlackUser>;
  readonly channels: ReadonlyMap<string, string>;
  readonly posted: FakeSlackPost[];
  /** Thread statuses shown now, by `<channel>:<thread_ts>`. */
  readonly statuses: Map<string, string>;
  readonly reactions: FakeSlackReaction[];
  /** What people wrote through the fake, for conversation reads. */
  readonly written: readonly FakeSlackWritten[];
  readonly url: string;
  nextTs(): string;
  /** Called after a post is recorded. */
  onPosted(): void;
}

/** The answer to one Web API call (`{ ok: true, … }` or `{ ok: false, error }`). */
export function answerWebApi(
  fake: WebApiState,
  method: string,
  params: Record<string, unknown>,
): Record<string, unknown> {
  switch (method) {
    case 'auth.test': {
      const orgWide = fake.enterprise?.orgWideInstall === true;
      return {
        ok: true,
        url: 'https://fake.slack.test/',
        team: fake.teamName,
        user: fake.bot.name,
        team_id: orgWide ? fake.enterprise?.id : fake.teamId,
        user_id: fake.bot.userId,
        bot_id: fake.bot.botId,
        ...(fake.enterprise !== undefined && { enterprise_id: fake.enterprise.id }),
        is_enterprise_install: orgWide,
      };
    }
    case 'users.info': {
      const id = String(params.user ?? '');
      const user = fake.users.get(id);
      if (user === undefined) return { ok: false, error: 'user_not_found' };
      const displayName = user.displayName ?? '';
      return {
        ok: true,
        user: {
          id,
          team_id: fake.teamId,
          name: user.name,
          real_name: displayName || user.name,
          is_bot: user.isBot ?? false,
          profile: { display_name: displayName, real_name: displayName || user.name },
        },
      };
    }
    case 'conversations.info': {
      const id = String(params.channel ?? '');
      if (id.startsWith('D')) return { ok: true, channel: { id, is_im: true, user: 'U0ALICE' } };
      const name = fake.channels.get(id);
      if (name === undefined) return { ok: false, error: 'channel_not_found' };
      return { ok: true, channel: { id, name, is_channel: true, is_member: true } };
    }
    case 'chat.postMessage': {
      const channel = String(params.channel ?? '');
      if (channel === '') return { ok: false, error: 'channel_not_found' };
      const text = String(params.text ?? '');
      if (text === '' && params.blocks === undefined) return { ok: false, error: 'no_text' };
      if (!blocksValid(params.blocks)) return { ok: false, error: 'invalid_blocks' };
      const metadata = readMetadata(params.metadata);
      if (typeof metadata === 'string') return { ok: false, error: metadata };
      const ts = fake.nextTs();
      const threadTs =
        typeof params.thread_ts === 'string' && params.thread_ts !== ''
          ? params.thread_ts
          : undefined;
      if (threadTs !== undefined) fake.statuses.delete(`${channel}:${threadTs}`);
      fake.posted.push({
        channel,
        text,
        ts,
        ...(threadTs !== undefined && { thread_ts: threadTs }),
        ...(metadata !== undefined && { metadata }),
        params,
      });
      fake.onPosted();
      const message = {
        type: 'message',
        user: fake.bot.userId,
        bot_id: fake.bot.botId,
        bot_profile: { id: fake.bot.botId, name: fake.bot.name, team_id: fake.teamId },
        team: fake.teamId,
        text,
        ts,
        ...(threadTs !== undefined && { thread_ts: threadTs }),
        ...(metadata !== undefined && { metadata }),
      };
      return { ok: true, channel, ts, message };
    }
    case 'chat.postEphemeral': {
      const channel = String(params.channel ?? '');
      if (channel === '') return { ok: false, error: 'channel_not_found' };
      const user = String(params.user ?? '');
      if (!fake.users.has(user)) return { ok: false, error: 'user_not_in_channel' };
      const text = String(params.text ?? '');
      if (text === '' && params.blocks === undefined) return { ok: false, error: 'no_text' };
      const ts = fake.nextTs();
      const threadTs = typeof params.thread_ts === 'string' ? params.thread_ts : undefined;
      fake.posted.push({
        channel,
        text,
        ts,
        ...(threadTs !== undefined && { thread_ts: threadTs }),
        visibleTo: user,
        params,
      });
      fake.onPosted();
      return { ok: true, message_ts: ts };
    }
    case 'conversations.open': {
      const user = String(params.users ?? '');
      if (!fake.users.has(user)) return { ok: false, error: 'user_not_found' };
      return { ok: true, channel: { id: dmChannelOf(user) } };
    }
    case 'chat.update': {
      const post = fake.posted.find((p) => p.channel === params.channel && p.ts === params.ts);
      if (post === undefined) return { ok: false, error: 'message_not_found' };
      const metadata = readMetadata(params.metadata);
      if (typeof metadata === 'string') return { ok: false, error: metadata };
      if (!blocksValid(params.blocks)) return { ok: false, error: 'invalid_blocks' };
      post.text = String(params.text ?? '');
      if (metadata !== undefined) post.metadata = metadata;
      if (params.blocks !== undefined) post.params = { ...post.params, blocks: params.blocks };
      return { ok: true, channel: post.channel, ts: post.ts, text: post.text };
    }
    case 'assistant.threads.setStatus': {
      const channel = String(params.channel_id ?? '');
      if (!channel.startsWith('D') && !fake.channels.has(channel))
        return { ok: false, error: 'channel_not_found' };
      const threadTs = String(params.thread_ts ?? '');
      if (!/^\d+\.\d+$/.test(threadTs)) return { ok: false, error: 'invalid_thread_ts' };
      if (typeof params.status !== 'string') return { ok: false, error: 'invalid_arguments' };
      if (params.status === '') fake.statuses.delete(`${channel}:${threadTs}`);
      else fake.statuses.set(`${channel}:${threadTs}`, params.status);
      return { ok: true };
    }
    case 'reactions.add':
    case 'reactions.remove': {
      const reaction = {
        channel: String(params.channel ?? ''),
        timestamp: String(params.timestamp ?? ''),
        name: String(params.name ?? ''),
      };
      if (reaction.name === '') return { ok: false, error: 'invalid_name' };
      const at = fake.reactions.findIndex(
        (r) =>
          r.channel === reaction.channel &&
          r.timestamp === reaction.timestamp &&
          r.name === reaction.name,
      );
      if (method === 'reactions.add') {
        if (at >= 0) return { ok: false, error: 'already_reacted' };
        fake.reactions.push(reaction);
      } else {
        if (at < 0) return { ok: false, error: 'no_reaction' };
        fake.reactions.splice(at, 1);
      }
      return { ok: true };
    }
    case 'conversations.history':
    case 'conversations.replies':
      return readConversation(fake, method, params);
    case 'apps.connections.open':
      return {
        ok: true,
        url: `${fake.url.replace(/^http/, 'ws')}/socket?ticket=${randomUUID()}`,
      };
    default:
      return { ok: false, error: 'unknown_method' };
  }
}

/** The id of the DM channel the fake opens with `user`: `D` and the user id after its `U`. */
export function dmChannelOf(user: string): string {
  return `D${user.replace(/^U/, '')}`;
}

/**
 * A post's `metadata` (an object, or JSON in a form body), or Slack's error code when it is
 * malformed; undefined when there is none.
 */
export function readMetadata(value: unknown): FakeSlackMetadata | string | undefined {
  if (value === undefined || value === '') return undefined;
  let metadata: unknown = value;
  if (typeof value === 'string') {
    try {
      metadata = JSON.parse(value);
    } catch {
      return 'invalid_metadata_format';
    }
  }
  const { event_type: type, event_payload: payload } = (metadata ?? {}) as Record<string, unknown>;
  if (typeof type !== 'string' || typeof payload !== 'object' || payload === null) {
    return 'invalid_metadata_schema';
  }
  return { event_type: type, event_payload: payload as Record<string, unknown> };
}

/** `v0=` + HMAC-SHA256(signing secret, `v0:<timestamp>:<body>`), as Slack signs requests. */
export function signSlackRequest(signingSecret: string, timestamp: string, body: string): string {
  return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function parseBody(contentType: string | undefined, raw: string): Record<string, unknown> {
  if (raw === '') return {};
  if (contentType?.includes('application/json')) {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  }
  return Object.fromEntries(new URLSearchParams(raw));
}
