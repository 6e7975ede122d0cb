import { createHash } from 'node:crypto';
import { DiscordAPIError, HTTPError, RateLimitError as DiscordRateLimitError } from 'discord.js';
import type { OutboundMessage } from '../../src/channel.js';
import { ColloquyError } from '../../src/errors.js';
import { redactError } from '../../src/logger.js';
import { platformError, type PlatformFailure } from '../shared/platform.js';
import type { Mark } from '../shared/markdown.js';
import { renderMarkdown } from '../shared/render.js';
import type { Dialect } from '../shared/render.js';

/** Discord's limit on a message's `content`, in UTF-16 code units. */
export const DISCORD_MESSAGE_LIMIT = 2000;

/**
 * A reply's Markdown as the contents of the Discord messages to post, in order. Discord reads
 * Markdown itself, so the answer stays as written, except tables (Discord shows none) as
 * aligned text in a code block; text the formatter reads as plain has its `*`, `~`, `` ` ``
 * and loose `_` escaped so Discord shows it plain too. Each part holds at most 2000
 * characters and renders on its own (see `renderMarkdown`, which also covers a prefix of an
 * answer being written).
 *
 * @example
 * ```ts
 * import { formatDiscord } from 'colloquy/discord';
 * formatDiscord('| a | b |\n|---|---|\n| 1 | 2 |'); // ['```\na | b\n--+--\n1 | 2\n```']
 * ```
 */
export function formatDiscord(markdown: string, limit = DISCORD_MESSAGE_LIMIT): string[] {
  return renderMarkdown(markdown, { ...discordDialect, limit });
}

const MARKER = { bold: '**', italic: '*', strike: '~~', code: '`' } as const;

/** Discord shows nothing inside a code span and no link inside a link. */
const hidden = (mark: Mark, outer: readonly Mark[]) =>
  outer.some(
    (m) =>
      m.kind === 'code' ||
      (m.kind === mark.kind && m.kind !== 'link') ||
      (mark.kind === 'link' && m.kind === 'link'),
  );

const discordDialect: Dialect = {
  limit: DISCORD_MESSAGE_LIMIT,
  text: (text, marks) =>
    marks.some((m) => m.kind === 'code')
      ? text
      : text.replace(
          /(https?:\/\/\S+)|\\(?=[\\*_~`|>#-])|[*~`]|\|\||(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu,
          (match, url?: string) => url ?? match.replace(/./gu, (ch) => `\\${ch}`),
        ),
  atom: (text) => text,
  open: (mark, outer) =>
    hidden(mark, outer) ? '' : mark.kind === 'link' ? '[' : MARKER[mark.kind],
  close: (mark, outer) =>
    hidden(mark, outer) ? '' : mark.kind === 'link' ? `](${mark.url})` : MARKER[mark.kind],
  line: (line, body) => {
    // Discord shows `#` to `###` as headings, bold already: the heading's own bold is dropped.
    if (line.heading >= 1 && line.heading <= 3) {
      const text = body.replace(/^\*\*([\s\S]*)\*\*$/, '$1');
      return `${line.quote ? '> ' : ''}${'#'.repeat(line.heading)} ${text}`;
    }
    return `${line.quote ? '> ' : ''}${line.lead.replace('•', '-')}${body}`;
  },
  code: (lang, code) => `\`\`\`${lang}\n${code}\n\`\`\``,
};

/** Who a message may ping (Discord's `allowed_mentions`). */
export interface DiscordAllowedMentions {
  parse?: Array<'users' | 'roles' | 'everyone'>;
  users?: string[];
  roles?: string[];
  replied_user?: boolean;
}

/** The JSON body of `POST /channels/{id}/messages` for one part of a reply. */
export interface DiscordMessageBody {
  content: string;
  message_reference?: { message_id: string; fail_if_not_exists: false };
  allowed_mentions: DiscordAllowedMentions;
  /** The part's key (`discordNonce`): Discord answers a second post of it with the first. */
  nonce?: string;
  enforce_nonce?: true;
}

/**
 * How long Discord keeps a nonce: a post with `enforce_nonce` is answered with the message
 * the same bot created with the same nonce within this time ("the past few minutes", the
 * least Discord promises), and creates a new one after it.
 */
export const DISCORD_NONCE_WINDOW_MS = 120_000;

/**
 * The nonce of part `index` of the reply `replyId`: 25 characters (Discord's most), the same
 * every time, so a part posted again after a crash is the one Discord already has.
 *
 * @example
 * ```ts
 * discordNonce('discord:dm:120257000000000000:1234:support:reply', 0); // 'c1f0…' (25 hex digits)
 * ```
 */
export function discordNonce(replyId: string, index: number): string {
  return createHash('sha256').update(`${replyId}\n${index}`).digest('hex').slice(0, 25);
}

/**
 * By default a reply may ping the users it names (`<@id>`) and the person it answers, never
 * `@everyone`, `@here` or a role: a model's output should not page a whole server.
 */
export const DEFAULT_ALLOWED_MENTIONS: DiscordAllowedMentions = {
  parse: ['users'],
  replied_user: true,
};

/** Where a reply is posted and the bodies to post there, in order. */
export interface DiscordOutbound {
  /** The channel to post to: the thread for a thread, else the channel (or DM channel). */
  channelId: string;
  bodies: DiscordMessageBody[];
}

/**
 * Turns an outbound turn into Discord message bodies: the text in parts of at most 2000
 * characters (see `formatDiscord`), the
 * first part a reply to the inbound message when there is one, the rest plain messages in the
 * same channel or thread, each with its nonce when the message names its `replyId`. Blank text
 * gives no bodies (Discord refuses empty messages).
 *
 * @example
 * ```ts
 * const { channelId, bodies } = formatOutbound({
 *   conversationId: 'discord:81384788765712384:41771983423143937',
 *   scope: 'channel',
 *   channelId: '41771983423143937',
 *   replyToMessageId: '1234567890123456789',
 *   content: 'Here you go.',
 * });
 * // bodies[0].message_reference.message_id === '1234567890123456789'
 * ```
 */
export function formatOutbound(
  message: OutboundMessage,
  allowedMentions: DiscordAllowedMentions = DEFAULT_ALLOWED_MENTIONS,
): DiscordOutbound {
  const parts = formatDiscord(message.content);
  return {
    channelId: message.threadId ?? message.channelId,
    bodies: parts.map((content, index) => ({
      content,
      ...(index === 0 &&
        message.replyToMessageId !== undefined && {
          message_reference: { message_id: message.replyToMessageId, fail_if_not_exists: false },
        }),
      allowed_mentions: allowedMentions,
      ...(message.replyId !== undefined && {
        nonce: discordNonce(message.replyId, index),
        enforce_nonce: true as const,
      }),
    })),
  };
}

/**
 * A discord.js failure as a colloquy error, by the policy every channel shares
 * ({@link platformError}): Discord answered and refused (`DiscordAPIError`, with Discord's
 * code: 50013 Missing Permissions, 10003 Unknown Channel…) or refused the token at login →
 * `PlatformError` with that code; a rate limit discord.js was told not to wait out
 * (`rejectOnRateLimit`) → `RateLimitError`; a 5xx after discord.js's retries → `PlatformError`
 * `http_<status>` (transient); anything else (refused connection, timeout) → `NetworkError`.
 * `call` names what was attempted (`a message in <channel id>`, `login`). The token never
 * reaches the result: the message is redacted and `cause` is a redacted copy
 * ({@link redactError}) of the discord.js error, which carries the request's URL and body.
 *
 * @example
 * ```ts
 * try { await client.rest.post(Routes.channelMessages(channelId), { body }); }
 * catch (error) { throw toColloquyError(error, `a message in ${channelId}`); }
 * ```
 */
export function toColloquyError(
  error: unknown,
  call: string,
  context: { conversationId?: string; messageId?: string } = {},
): ColloquyError {
  if (error instanceof ColloquyError) return error;
  const cause = redactError(error);
  return platformError('discord', call, discordFailure(error, cause.message), {
    ...context,
    cause,
  });
}

/** What discord.js (and @discordjs/rest underneath) threw, read. */
function discordFailure(error: unknown, redactedMessage: string): PlatformFailure {
  if (error instanceof DiscordAPIError) {
    return {
      kind: 'refused',
      code: String(error.code),
      detail: `${redactedMessage} (${error.code})`,
    };
  }
  if (error instanceof DiscordRateLimitError) {
    // Both in ms: how long Discord asked for, else how long until the bucket resets.
    const wait = error.retryAfter > 0 ? error.retryAfter : error.timeToReset;
    return { kind: 'rate-limited', ...(wait > 0 && { retryAfterMs: wait }) };
  }
  if (error instanceof HTTPError) return { kind: 'http', status: error.status };
  if ((error as { code?: unknown } | null)?.code === 'TokenInvalid') {
    return { kind: 'refused', code: 'TokenInvalid', detail: 'the token was refused' };
  }
  return { kind: 'unreachable', detail: redactedMessage };
}
