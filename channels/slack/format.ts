/**
 * Outbound text for Slack: Markdown as Slack's mrkdwn (tables as code blocks), the three
 * characters Slack reserves escaped, split into messages Slack will not truncate; and Web API
 * failures as colloquy errors.
 *
 * @example
 * ```ts
 * import { formatSlackText } from 'colloquy/slack';
 * formatSlackText('**Done** — see [the docs](https://example.com)');
 * // ['*Done* — see <https://example.com|the docs>']
 * ```
 */
import { ColloquyError } from '../../src/errors.js';
import { redactError, redactText } from '../../src/logger.js';
import { platformError, type PlatformFailure } from '../shared/platform.js';
import type { Mark } from '../shared/markdown.js';
import { renderMarkdown } from '../shared/render.js';
import type { Dialect } from '../shared/render.js';

/** chat.postMessage truncates `text` beyond 4,000 characters (Slack API docs). */
export const SLACK_TEXT_LIMIT = 4000;

/** Slack tokens an agent may write on purpose (`<@U1>`, `<#C1>`, `<!here>`, `<https://…|label>`). */
const SLACK_TOKEN = /<(?:@[UWB][A-Z0-9]+|#C[A-Z0-9]+|![a-z^]+|(?:https?|mailto):)[^<>\n]*>/g;

/** `<!here>`, `<!channel>`, `<!everyone>`, `<!group>`, `<!subteam^S1|@team>`: they ping many people. */
const BROADCAST = /^<!(?:here|channel|everyone|group|subteam\^)/;

/** Options of {@link escapeSlackText} and {@link formatSlackText}. */
export interface SlackTextOptions {
  /**
   * Keep `<!here>`, `<!channel>`, `<!everyone>` and `<!subteam^…>` as mentions that notify a
   * whole channel or user group. Default false: they are escaped and show as plain text, so a
   * model (or a prompt injected into it) cannot page everyone.
   */
  allowBroadcastMentions?: boolean;
}

/**
 * Escapes `&`, `<` and `>` as Slack asks, keeping Slack's own `<…>` tokens intact — except the
 * broadcast mentions (`<!here>`, `<!channel>`, `<!everyone>`, `<!subteam^…>`), which are escaped
 * into plain text unless `allowBroadcastMentions` is set.
 *
 * @example
 * ```ts
 * escapeSlackText('<@U0ALICE> see <!here> & <https://example.com|this>');
 * // '<@U0ALICE> see &lt;!here&gt; &amp; <https://example.com|this>'
 * ```
 */
export function escapeSlackText(text: string, options: SlackTextOptions = {}): string {
  const escape = (plain: string) =>
    plain.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const keep = (token: string) =>
    options.allowBroadcastMentions === true || !BROADCAST.test(token) ? token : escape(token);
  let out = '';
  let last = 0;
  for (const match of text.matchAll(SLACK_TOKEN)) {
    out += escape(text.slice(last, match.index)) + keep(match[0]);
    last = match.index + match[0].length;
  }
  return out + escape(text.slice(last));
}

/** `@here`, `@channel`, `@everyone` written as words, and Slack's `<!…>` special mentions. */
const MARKDOWN_BROADCAST = /(^|[^\w<])@(here|channel|everyone)\b|<!/gi;

/**
 * An answer as the `markdown_text` of Slack's streaming methods, with its broadcast mentions
 * (`@here`, `@channel`, `@everyone`, `<!here>`, `<!channel>`, `<!subteam^…>`) shown as text
 * that notifies no one (an invisible word joiner after the `@` or the `<`), unless
 * `allowBroadcastMentions`. The change never moves text already written, so a growing answer
 * keeps growing.
 *
 * @example
 * ```ts
 * escapeSlackMarkdown('ping <!here> and @channel'); // 'ping <\u2060!here> and @\u2060channel'
 * ```
 */
export function escapeSlackMarkdown(text: string, options: SlackTextOptions = {}): string {
  if (options.allowBroadcastMentions === true) return text;
  return text.replace(MARKDOWN_BROADCAST, (match, before: string | undefined, word?: string) =>
    word === undefined ? '<\u2060!' : `${before ?? ''}@\u2060${word}`,
  );
}

/**
 * Markdown as Slack mrkdwn, escaped (see {@link escapeSlackText}): `**b**` → `*b*`, `*i*` →
 * `_i_`, `~~s~~` → `~s~`, `[label](url)` → `<url|label>`, headings bold, list markers `•`,
 * code spans and blocks kept (a block's language dropped: Slack would show it as text),
 * tables as aligned text in a code block.
 *
 * @example
 * ```ts
 * markdownToMrkdwn('# Plan\n**bold** and [docs](https://x.io)'); // '*Plan*\n*bold* and <https://x.io|docs>'
 * ```
 */
export function markdownToMrkdwn(markdown: string, options: SlackTextOptions = {}): string {
  return formatSlackText(markdown, Number.MAX_SAFE_INTEGER, options).join('\n\n');
}

/**
 * An agent's answer as the texts of the Slack messages to post, each at most `limit`
 * characters of mrkdwn (see {@link markdownToMrkdwn}), split at block, line or word boundaries
 * with code blocks and styled text closed and reopened across a cut. Broadcast mentions are
 * escaped unless `options.allowBroadcastMentions` (see {@link escapeSlackText}). Works on a
 * prefix of an answer being written (see `renderMarkdown`).
 *
 * @example
 * ```ts
 * formatSlackText('**Done** — see [the docs](https://example.com)');
 * // ['*Done* — see <https://example.com|the docs>']
 * ```
 */
export function formatSlackText(
  content: string,
  limit: number = SLACK_TEXT_LIMIT,
  options: SlackTextOptions = {},
): string[] {
  return renderMarkdown(content, slackDialect(limit, options));
}

const MRKDWN = { bold: '*', italic: '_', strike: '~', code: '`' } as const;

function slackDialect(limit: number, options: SlackTextOptions): Dialect {
  const escape = (text: string) => escapeSlackText(text, options);
  // Slack shows no style inside a link's label or a code span, nor the same style twice.
  const shown = (mark: Mark, outer: readonly Mark[]) =>
    !outer.some((m) => m.kind === 'link' || m.kind === 'code' || m.kind === mark.kind);
  return {
    limit,
    text: escape,
    atom: escape,
    open: (mark, outer) => {
      if (!shown(mark, outer)) return '';
      return mark.kind === 'link'
        ? `<${escape(mark.url).replace(/\|/g, '%7C')}|`
        : MRKDWN[mark.kind];
    },
    close: (mark, outer) => {
      if (!shown(mark, outer)) return '';
      return mark.kind === 'link' ? '>' : MRKDWN[mark.kind];
    },
    line: (line, body) => `${line.quote ? '> ' : ''}${escape(line.lead)}${body}`,
    code: (_lang, code) => `\`\`\`\n${escape(code)}\n\`\`\``,
  };
}

/**
 * A Web API failure as a colloquy error, by the policy every channel shares
 * ({@link platformError}): Slack refused (`not_in_channel`…) → `PlatformError` with Slack's
 * code; rate-limited (a 429 the client stopped waiting out, or Slack's `ratelimited` /
 * `rate_limited`) → `RateLimitError`; an HTTP 5xx → `PlatformError` `http_<status>`
 * (transient); Slack unreachable → `NetworkError`. The token never reaches the result: the
 * message is redacted, and `cause` is a redacted copy of the Web API error
 * ({@link redactError}), never the error itself, which can hold the HTTP request and its
 * `Authorization: Bearer xoxb-…` header.
 *
 * @example
 * ```ts
 * try { await app.client.chat.postMessage({ channel, text }); }
 * catch (error) { bot.report(toColloquyError(error, { method: 'chat.postMessage' })); }
 * ```
 */
export function toColloquyError(
  error: unknown,
  context: { method: string; conversationId?: string },
): ColloquyError {
  if (error instanceof ColloquyError) return error;
  const cause = redactError(error);
  return platformError('slack', context.method, slackFailure(error, cause.message), {
    cause,
    conversationId: context.conversationId,
  });
}

/** Slack's answers that mean "slow down" (the 429 body, and chat.postMessage's own). */
const RATE_LIMIT_CODES = new Set(['ratelimited', 'rate_limited']);

/**
 * What `@slack/web-api` threw, read: its coded errors, and the plain errors it gives a 429 once
 * its retries are spent ("A rate limit was exceeded (…, retry-after: 30)", wrapped as a request
 * error; "Retry header did not contain a valid timeout", bare).
 */
function slackFailure(error: unknown, redactedMessage: string): PlatformFailure {
  const coded = error as {
    code?: unknown;
    data?: { error?: unknown };
    statusCode?: unknown;
    retryAfter?: unknown;
    original?: unknown;
  } | null;
  switch (coded?.code) {
    case 'slack_webapi_platform_error': {
      const code = redactText(String(coded.data?.error ?? 'unknown_error'));
      return RATE_LIMIT_CODES.has(code) ? { kind: 'rate-limited' } : { kind: 'refused', code };
    }
    case 'slack_webapi_rate_limited_error':
      return { kind: 'rate-limited', ...retryAfterMs(coded.retryAfter) };
    case 'slack_webapi_http_error':
      return { kind: 'http', status: Number(coded.statusCode) };
  }
  const plain = coded?.code === 'slack_webapi_request_error' ? coded.original : error;
  const message = plain instanceof Error ? plain.message : '';
  if (message.startsWith('A rate limit was exceeded')) {
    return { kind: 'rate-limited', ...retryAfterMs(/retry-after: (\d+)/.exec(message)?.[1]) };
  }
  if (message.startsWith('Retry header did not contain a valid timeout')) {
    return { kind: 'rate-limited' };
  }
  return { kind: 'unreachable', detail: redactedMessage };
}

function retryAfterMs(seconds: unknown): { retryAfterMs?: number } {
  const value = Number(seconds);
  return seconds !== undefined && Number.isFinite(value) ? { retryAfterMs: value * 1000 } : {};
}
