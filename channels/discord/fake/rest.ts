import { readMultipart, type FormPart } from '../../testing/multipart.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EditWindow } from '../../testing/edit-limit.js';
import type { FakeDiscordChannel, FakeDiscordMessage, FakeDiscordUser } from './payloads.js';

/** A scripted failure for the next message the bot posts. */
export interface FakeDiscordFailure {
  /** HTTP status: 429 (rate limited), 403, 404, 500… */
  status: number;
  /** Seconds to wait, for a 429 (`Retry-After` header and `retry_after` body; default 0.05). */
  retryAfter?: number;
  /** Discord JSON error code (50013 Missing Permissions, 10003 Unknown Channel…). */
  code?: number;
  message?: string;
}

/** One REST call the fake served. */
export interface FakeDiscordRequest {
  method: string;
  path: string;
  body: unknown;
  status: number;
  /** When the fake answered the request, in ms since the epoch. */
  at: number;
}

/** The largest file a bot may upload (Discord's default, 10 MiB). */
export const DISCORD_UPLOAD_LIMIT = 10 * 1024 * 1024;

/** What the REST half needs from FakeDiscord. */
export interface RestHost {
  token: string;
  botUser: FakeDiscordUser;
  gatewayUrl: string;
  /** The shard count `GET /gateway/bot` recommends. */
  shards: number;
  channel(id: string): FakeDiscordChannel | undefined;
  /** The DM channel with the user `recipientId`, opened when there is none yet. */
  dmWith(recipientId: string): FakeDiscordChannel;
  message(id: string): FakeDiscordMessage | undefined;
  nextFailure(): FakeDiscordFailure | undefined;
  /** The edits the bot made, by channel: past the limit, a `PATCH` is answered 429. */
  edits: EditWindow;
  /**
   * The bot posts `content` in `channel` (replying to `referencedId`): record and echo it. With
   * `enforce` and a nonce the bot posted within the nonce window, nothing is created and the
   * message posted then is answered.
   */
  post(
    channel: FakeDiscordChannel,
    content: string,
    referencedId?: string,
    nonce?: { value: string | number; enforce: boolean },
  ): FakeDiscordMessage;
  /**
   * The wait before a created message's HTTP answer (a bot killed meanwhile lacks its id), or
   * undefined to answer at once.
   */
  answerDelay(): Promise<void> | undefined;
  /** The `attachments` of a message the bot posted with these file parts (`attachments` of its payload naming them). */
  attach(channelId: string, uploads: readonly FormPart[], payload: object): unknown[];
  /** The bot adds its reaction `emoji` to a message. */
  react(channelId: string, messageId: string, emoji: string): void;
  edit(messageId: string, content: string): FakeDiscordMessage;
  remove(messageId: string): void;
  record(request: FakeDiscordRequest): void;
  /** The interaction routes (callbacks, webhooks, commands), or undefined for another route. */
  interactions(
    method: string,
    route: string,
    body: unknown,
  ): { status: number; data?: unknown } | undefined;
}

type Answer = (status: number, data?: unknown, headers?: Record<string, string>) => void;

/**
 * The REST half of FakeDiscord, `/api/v10/...`: the gateway URL, the bot user, channels, the
 * typing indicator, and creating, editing and deleting messages, with Discord's JSON errors (`{ message, code }`)
 * and 429s that carry the rate-limit headers discord.js reads.
 */
export async function handleRest(
  host: RestHost,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  // A message with files comes as multipart/form-data: `payload_json` and `files[n]`.
  const parts = readMultipart(raw, req.headers['content-type'] ?? '');
  const uploads = parts.filter((part) => part.filename !== undefined);
  const payload = parts.find((part) => part.name === 'payload_json');
  const text = (payload?.bytes ?? raw).toString('utf8');
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  const method = req.method ?? 'GET';
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  const answer: Answer = (status, data, headers = {}) => {
    host.record({ method, path, body, status, at: Date.now() });
    res.writeHead(status, {
      ...(data !== undefined && { 'content-type': 'application/json' }),
      ...headers,
    });
    res.end(data === undefined ? undefined : JSON.stringify(data));
  };
  const route = path.replace(/^\/api\/v10/, '');
  // An interaction's token is its credential: its callback and webhook take no bot token.
  const tokenRoute = /^\/(interactions|webhooks)\//.test(route);
  if (!tokenRoute && req.headers.authorization !== `Bot ${host.token}`) {
    return answer(401, { message: '401: Unauthorized', code: 0 });
  }
  const interaction = host.interactions(method, route, body);
  if (interaction !== undefined) return answer(interaction.status, interaction.data);
  if (method === 'GET' && route === '/gateway/bot') {
    return answer(200, {
      url: host.gatewayUrl,
      shards: host.shards,
      session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
    });
  }
  if (method === 'GET' && route === '/users/@me') return answer(200, host.botUser);
  if (method === 'POST' && route === '/users/@me/channels') {
    const recipient = (body as { recipient_id?: unknown } | undefined)?.recipient_id;
    return typeof recipient === 'string' && /^\d+$/.test(recipient)
      ? answer(200, host.dmWith(recipient))
      : answer(400, { message: 'Invalid Form Body', code: 50035 });
  }
  const channelRoute = /^\/channels\/(\d+)$/.exec(route);
  if (method === 'GET' && channelRoute) {
    const channel = host.channel(channelRoute[1] ?? '');
    return channel
      ? answer(200, channel)
      : answer(404, { message: 'Unknown Channel', code: 10003 });
  }
  const typing = /^\/channels\/(\d+)\/typing$/.exec(route);
  if (method === 'POST' && typing) {
    // Discord answers a typing trigger with 204 No Content.
    return host.channel(typing[1] ?? '')
      ? answer(204)
      : answer(404, { message: 'Unknown Channel', code: 10003 });
  }
  const reaction = /^\/channels\/(\d+)\/messages\/(\d+)\/reactions\/([^/]+)\/@me$/.exec(route);
  if (method === 'PUT' && reaction) {
    const [, channelId = '', messageId = '', emoji = ''] = reaction;
    if (host.message(messageId)?.channel_id !== channelId) {
      return answer(404, { message: 'Unknown Message', code: 10008 });
    }
    host.react(channelId, messageId, decodeURIComponent(emoji));
    return answer(204);
  }
  const messages = /^\/channels\/(\d+)\/messages(?:\/(\d+))?$/.exec(route);
  if (!messages) return answer(404, { message: '404: Not Found', code: 0 });
  const channel = host.channel(messages[1] ?? '');
  if (!channel) return answer(404, { message: 'Unknown Channel', code: 10003 });
  const messageId = messages[2];
  if (method === 'POST' && messageId === undefined) {
    const failure = host.nextFailure();
    return failure ? fail(failure, answer) : postMessage(host, channel, body, answer, uploads);
  }
  const existing = messageId === undefined ? undefined : host.message(messageId);
  if (!existing || existing.channel_id !== channel.id) {
    return answer(404, { message: 'Unknown Message', code: 10008 });
  }
  if (method === 'PATCH') {
    const waitMs = host.edits.take(channel.id);
    if (waitMs !== undefined) return fail({ status: 429, retryAfter: waitMs / 1000 }, answer);
    const { content, components } = (body ?? {}) as { content?: unknown; components?: unknown };
    if (Array.isArray(components)) existing.components = components;
    return answer(
      200,
      host.edit(existing.id, typeof content === 'string' ? content : existing.content),
    );
  }
  if (method === 'DELETE') {
    host.remove(existing.id);
    return answer(204);
  }
  return answer(405, { message: '405: Method Not Allowed', code: 0 });
}

async function postMessage(
  host: RestHost,
  channel: FakeDiscordChannel,
  body: unknown,
  answer: Answer,
  uploads: readonly FormPart[] = [],
): Promise<void> {
  const request = (typeof body === 'object' && body !== null ? body : {}) as {
    content?: unknown;
    message_reference?: { message_id?: string; fail_if_not_exists?: boolean };
    nonce?: unknown;
    enforce_nonce?: unknown;
  };
  const content = typeof request.content === 'string' ? request.content : '';
  if (uploads.some((file) => file.bytes.length > DISCORD_UPLOAD_LIMIT)) {
    return answer(413, { message: 'Request entity too large', code: 40005 });
  }
  if (content.length === 0 && uploads.length === 0) {
    return answer(400, { message: 'Cannot send an empty message', code: 50006 });
  }
  if (content.length > 2000) {
    return answer(400, {
      message: 'Invalid Form Body',
      code: 50035,
      errors: {
        content: {
          _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }],
        },
      },
    });
  }
  const reference = request.message_reference;
  const referenced =
    reference?.message_id === undefined ? undefined : host.message(reference.message_id);
  if (
    reference?.message_id !== undefined &&
    !referenced &&
    reference.fail_if_not_exists !== false
  ) {
    return answer(400, { message: 'Invalid Form Body', code: 50035 });
  }
  const { nonce } = request;
  if (nonce !== undefined && !validNonce(nonce)) {
    return answer(400, {
      message: 'Invalid Form Body',
      code: 50035,
      errors: { nonce: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Bad nonce.' }] } },
    });
  }
  const posted = host.post(
    channel,
    content,
    referenced?.id,
    nonce === undefined ? undefined : { value: nonce, enforce: request.enforce_nonce === true },
  );
  const { components } = request as { components?: unknown };
  if (Array.isArray(components)) posted.components = components;
  // A nonce Discord kept is answered with the message it created, files included.
  if (uploads.length > 0 && posted.attachments.length === 0) {
    posted.attachments = host.attach(channel.id, uploads, request);
  }
  const held = host.answerDelay();
  if (held !== undefined) await held;
  answer(200, posted);
}

/** Discord takes a nonce of at most 25 characters, as a string or an integer. */
function validNonce(nonce: unknown): nonce is string | number {
  if (typeof nonce === 'number') return Number.isInteger(nonce);
  return typeof nonce === 'string' && nonce.length > 0 && nonce.length <= 25;
}

function fail(failure: FakeDiscordFailure, answer: Answer): void {
  if (failure.status === 429) {
    const retryAfter = failure.retryAfter ?? 0.05;
    return answer(
      429,
      { message: 'You are being rate limited.', retry_after: retryAfter, global: false },
      {
        'retry-after': String(retryAfter),
        'x-ratelimit-limit': '5',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset-after': String(retryAfter),
        'x-ratelimit-bucket': 'fake-messages-bucket',
        'x-ratelimit-scope': 'user',
      },
    );
  }
  answer(failure.status, {
    message: failure.message ?? `Fake failure ${failure.status}`,
    code: failure.code ?? 0,
  });
}
