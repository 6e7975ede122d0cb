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
import type { AppOptions } from '@slack/bolt';
import { neverSent, platformError, type PlatformFailure } from '../shared/platform.js';
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

/**
 * Whether Slack refused the call with `code`. A repeated change answers that the state it asks
 * for holds already (`already_reacted`, `no_reaction`): the change is made.
 *
 * @example
 * ```ts
 * slackRefused(error, 'already_reacted'); // true when the bot's reaction is there
 * ```
 */
export function slackRefused(error: unknown, code: string): boolean {
  const coded = error as { code?: unknown; data?: { error?: unknown } } | null;
  return coded?.code === 'slack_webapi_platform_error' && coded.data?.error === code;
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

/** The Web API client's options (Bolt's `clientOptions`). */
type ClientOptions = NonNullable<AppOptions['clientOptions']>;
/** `retryConfig` as the client uses it: handed to p-retry, whose `onFailedAttempt` may end the retries. */
type RetryConfig = NonNullable<ClientOptions['retryConfig']> & {
  onFailedAttempt?: (error: Error) => void | Promise<void>;
};

/**
 * Methods the client may call again after a network failure although Slack may have acted on
 * the first call: reads, and changes that leave the same state when repeated. A post
 * (`chat.postMessage`, `chat.startStream`, `chat.appendStream`, `files.completeUploadExternal`…)
 * is not among them: called again it shows twice.
 */
const REPEATABLE =
  /^(auth\.test|conversations\.open|apps\.connections\.open|files\.getUploadURLExternal|chat\.(update|delete)|reactions\.(add|remove)|assistant\.threads\.setStatus|[\w.]+\.(info|list|history|replies))$/;

/** A post whose connection failed after its request may have reached Slack. */
class PostCutOff extends Error {
  override name = 'PostCutOff';
  constructor(method: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`the answer to ${method} was lost (${reason}); Slack may have posted it`, { cause });
  }
}

/**
 * True when `error` (a Web API error) is a post cut off after its request may have reached
 * Slack (see {@link postingOnce}): Slack may have the message, and only a read can tell.
 *
 * @example
 * ```ts
 * try { await client.chat.postMessage(post); }
 * catch (error) { if (mayHavePosted(error)) await findReply(client, message, recordedAt); }
 * ```
 */
export function mayHavePosted(error: unknown): boolean {
  return (error as { original?: unknown } | null)?.original instanceof PostCutOff;
}

/**
 * Web API client options whose retries never post twice: a network failure is retried for a
 * read or a change that may be repeated (`conversations.replies`, `chat.update`…), and for any
 * method when the request provably never left (a refused connection, see `neverSent`); a post
 * cut off after it may have reached Slack fails at once ({@link mayHavePosted}). 429s and HTTP
 * errors keep the client's retries. `options.fetch` and `options.retryConfig` are kept.
 *
 * @example
 * ```ts
 * const app = new App({ token, signingSecret, clientOptions: postingOnce({ retryConfig }) });
 * ```
 */
export function postingOnce(options: ClientOptions): ClientOptions {
  const fetchFn = options.fetch ?? globalThis.fetch;
  const retry: RetryConfig = options.retryConfig ?? {};
  const retryConfig: RetryConfig = {
    ...retry,
    onFailedAttempt: async (failed) => {
      if (mayHavePosted(failed)) throw failed; // ends the client's retries with this error
      await retry.onFailedAttempt?.(failed);
    },
  };
  return {
    ...options,
    fetch: async (url, init) => {
      try {
        return await fetchFn(url, init);
      } catch (error) {
        const method = new URL(url).pathname.split('/').at(-1) ?? '';
        throw REPEATABLE.test(method) || neverSent(error) ? error : new PostCutOff(method, error);
      }
    },
    retryConfig,
  };
}
