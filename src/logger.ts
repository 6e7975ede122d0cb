/**
 * Where colloquy says what it is doing. Replaceable: pass any object with these four methods
 * (pino and winston loggers fit with a one-line adapter).
 *
 * @example
 * ```ts
 * const logger: Logger = {
 *   debug: () => {},
 *   info: (msg, fields) => pino.info(fields, msg),
 *   warn: (msg, fields) => pino.warn(fields, msg),
 *   error: (msg, fields) => pino.error(fields, msg),
 * };
 * ```
 */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface ConsoleLoggerOptions {
  /** Lowest level written; default `COLLOQUY_LOG_LEVEL` (read at each call), else `info`. */
  level?: LogLevel;
  /** Where a finished line goes (default: `process.stderr`). */
  write?: (line: string) => void;
  /** Clock for the line's timestamp (default: now). */
  now?: () => Date;
}

/**
 * A logger that writes one line per call to stderr:
 * `2026-11-21T09:30:00.000Z WARN capture: store write failed {"conversationId":"telegram:42"}`.
 * Fields and the message always pass through {@link redact} first.
 *
 * @example
 * ```ts
 * const logger = createConsoleLogger({ level: 'debug' });
 * logger.debug('sent', { conversationId: 'telegram:42', token: 'hidden' }); // token: "[redacted]"
 * ```
 */
export function createConsoleLogger(options: ConsoleLoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => void process.stderr.write(line));
  const now = options.now ?? (() => new Date());
  const log =
    (level: Exclude<LogLevel, 'silent'>) => (msg: string, fields?: Record<string, unknown>) => {
      if (LEVELS[level] < LEVELS[options.level ?? levelFromEnv()]) return;
      const text = redactText(msg).replace(/\r?\n/g, '\\n');
      const extra = fields && Object.keys(fields).length > 0 ? ` ${safeJson(redact(fields))}` : '';
      write(`${now().toISOString()} ${level.toUpperCase()} ${text}${extra}\n`);
    };
  return maskingLogger(log);
}

type LogCall = (msg: string, fields?: Record<string, unknown>) => void;

/** Loggers that mask secrets themselves: {@link redactingLogger} hands them back unwrapped. */
const redactingLoggers = new WeakSet<Logger>();

function redacts(logger: Logger): Logger {
  redactingLoggers.add(logger);
  return logger;
}

/** A logger whose calls at each level are `log(level)`, which masks what it writes. */
function maskingLogger(log: (level: Exclude<LogLevel, 'silent'>) => LogCall): Logger {
  return redacts({
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
  });
}

/**
 * `logger` with every call masked before it reaches it: the message through {@link redactText},
 * the fields through {@link redact}, except that an error stays an `Error` (a
 * {@link redactError} copy, stack and causes included) so pino's or winston's error
 * serialiser still finds it. The bot and capture wrap the logger they are given with it; a
 * logger that already masks (the console and silent loggers) comes back as is.
 *
 * @example
 * ```ts
 * const logger = redactingLogger(pinoAdapter); // the four-method adapter shown on `Logger`
 * logger.error('failed', { cause: new Error('GET /bot123456:AAH…/getMe') }); // cause.stack masked
 * ```
 */
export function redactingLogger(logger: Logger): Logger {
  if (redactingLoggers.has(logger)) return logger;
  return maskingLogger((level) => (msg, fields) => {
    const text = redactText(msg);
    if (fields === undefined) logger[level](text);
    else logger[level](text, redactValue(fields, new WeakSet(), 0, true) as typeof fields);
  });
}

/**
 * The default logger: stderr, level from `COLLOQUY_LOG_LEVEL` (`debug`, `info`, `warn`,
 * `error`, `silent`; default `info`), secrets redacted.
 *
 * @example
 * ```ts
 * import { consoleLogger } from 'colloquy';
 * consoleLogger.info('bot started', { channels: ['telegram'] });
 * ```
 */
export const consoleLogger: Logger = createConsoleLogger();

/**
 * A logger that says nothing, for tests and embedding.
 *
 * @example
 * ```ts
 * new Capture(store, { logger: silentLogger });
 * ```
 */
export const silentLogger: Logger = redacts({ debug() {}, info() {}, warn() {}, error() {} });

/**
 * What is wrong with `COLLOQUY_LOG_LEVEL`, or undefined when it is unset or a known level.
 * `Bot.start` refuses to start on it when the bot logs through the console logger.
 *
 * @example
 * ```ts
 * logLevelProblem({ COLLOQUY_LOG_LEVEL: 'verbose' }); // 'COLLOQUY_LOG_LEVEL must be one of …'
 * ```
 */
export function logLevelProblem(
  env: Record<string, string | undefined> = process.env,
): string | undefined {
  const value = env.COLLOQUY_LOG_LEVEL?.trim();
  if (value === undefined || value === '' || value.toLowerCase() in LEVELS) return undefined;
  return `COLLOQUY_LOG_LEVEL must be one of ${Object.keys(LEVELS).join(', ')}, not "${value}"`;
}

function levelFromEnv(): LogLevel {
  const value = process.env.COLLOQUY_LOG_LEVEL?.trim().toLowerCase();
  return value !== undefined && value in LEVELS ? (value as LogLevel) : 'info';
}

const SECRET_KEY =
  /(token|secret|password|passwd|passphrase|authorization|api[-_]?key|cookie|credentials?|signature|private[-_]?key)$/i;

const SECRET_TEXT: RegExp[] = [
  /xox[abeprs]-[A-Za-z0-9-]+/g, // Slack bot, user, app-level refresh and legacy tokens
  /xapp-[A-Za-z0-9-]+/g, // Slack app-level tokens (Socket Mode)
  /\d+:[A-Za-z0-9_-]{30,}/g, // Telegram bot tokens (123456:ABC…)
  /[MNO][A-Za-z0-9_-]{22,27}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,}/g, // Discord bot tokens
  /\bsk-[A-Za-z0-9_*-]{16,}/g, // OpenAI (sk-, sk-proj-) and Anthropic (sk-ant-) keys, masked ones too
  /\bAIza[A-Za-z0-9_-]{35}/g, // Google API keys
  /\bgh[pousr]_[A-Za-z0-9]{36,}/g, // GitHub tokens
];

/** Environment variables whose values are secrets wherever they appear (model keys, tokens). */
const SECRET_ENV = /(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSPHRASE)$/i;
/** Shorter values are not masked: they would mask ordinary words. */
const MIN_SECRET_LENGTH = 8;
const added = new Set<string>();

/**
 * Adds a value to the secrets {@link redactText} masks wherever it appears (every log line,
 * every colloquy error message). Channels add their tokens and `modelFromEnv` the model key;
 * add yours when a secret reaches colloquy some other way. Values of environment variables
 * named like secrets (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `COLLOQUY_MODEL_API_KEY`,
 * `SLACK_BOT_TOKEN`, `*_SECRET`, …) are masked without being added.
 *
 * @example
 * ```ts
 * addSecret(config.openai.apiKey);
 * ```
 */
export function addSecret(value: string | undefined): void {
  if (value !== undefined && value.length >= MIN_SECRET_LENGTH) added.add(value);
}

/** The configured secret values, longest first (so a longer one is masked whole). */
function configuredSecrets(): string[] {
  const values = new Set(added);
  if (typeof process !== 'undefined') {
    for (const [name, value] of Object.entries(process.env)) {
      if (value !== undefined && value.length >= MIN_SECRET_LENGTH && SECRET_ENV.test(name)) {
        values.add(value);
      }
    }
  }
  return [...values].sort((a, b) => b.length - a.length);
}

const MASK = '[redacted]';

/** Secrets recognised by what stands before them, which the replacement keeps. */
const SECRET_IN_CONTEXT: [RegExp, string][] = [
  [/\bbot\d+:[A-Za-z0-9_-]+/g, `bot${MASK}`], // Telegram Bot API URLs (/bot<id>:<token>/getMe), any length
  [/\bBearer\s+[A-Za-z0-9._~+/-]{8,}=*/g, `Bearer ${MASK}`], // Authorization header values
  [/(\/webhooks\/\d+\/)[A-Za-z0-9_-]{20,}/g, `$1${MASK}`], // Discord webhook URLs
  [/(hooks\.slack\.com\/services\/[A-Z0-9]+\/[A-Z0-9]+\/)[A-Za-z0-9]+/g, `$1${MASK}`], // Slack webhook URLs
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s/@]+@/gi, `$1${MASK}@`], // passwords in URLs (postgres://user:pw@host)
];

/**
 * Masks every configured secret value (see {@link addSecret}) and anything that looks like a
 * bot token or an API key inside a string.
 *
 * @example
 * ```ts
 * redactText('GET /bot123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq/getMe');
 * // 'GET /bot[redacted]/getMe'
 * ```
 */
export function redactText(text: string): string {
  const values = configuredSecrets().reduce((out, secret) => out.split(secret).join(MASK), text);
  const masked = SECRET_IN_CONTEXT.reduce(
    (out, [pattern, replacement]) => out.replace(pattern, replacement),
    values,
  );
  return SECRET_TEXT.reduce((out, pattern) => out.replace(pattern, MASK), masked);
}

/** Fields of a library's error worth keeping on its redacted copy: what failed, never the request. */
const KEPT_ERROR_FIELDS = [
  'code',
  'status',
  'statusCode',
  'error_code',
  'description',
  'errno',
  'syscall',
  'retryAfter',
  'conversationId',
  'messageId',
] as const;

/** Where libraries keep the error underneath: `cause`, grammy's `error`, Slack's `original`. */
const INNER_ERROR_FIELDS = ['cause', 'error', 'original'] as const;

/**
 * A copy of a platform library's error that is safe to keep as a `cause`, print or serialise:
 * a plain `Error` with the original's name, its message and stack passed through
 * {@link redactText}, and only `code`, `status`, `statusCode`, `error_code`, `description`,
 * `errno`, `syscall`, `retryAfter`, `conversationId` and `messageId` kept. Request configs,
 * headers, bodies, URLs and the library's own objects are left behind; the error underneath
 * (`cause`, grammy's `error`, Slack's `original`) is copied the same way, a few levels deep.
 *
 * @example
 * ```ts
 * try { await bot.api.getMe(); }
 * catch (error) { throw new NetworkError('Telegram getMe failed', { cause: redactError(error) }); }
 * // cause: HttpError: Network request for 'getMe' failed!
 * //   [cause]: FetchError: request to https://api.telegram.org/bot[redacted]/getMe failed …
 * ```
 */
export function redactError(error: unknown): Error {
  return redactedCopy(error, 0);
}

function redactedCopy(error: unknown, depth: number): Error {
  const source = (typeof error === 'object' && error !== null ? error : {}) as Record<
    string,
    unknown
  >;
  const message =
    typeof source.message === 'string'
      ? source.message
      : typeof source.description === 'string'
        ? source.description
        : String(error);
  const inner =
    depth < 4
      ? INNER_ERROR_FIELDS.map((key) => source[key]).find(
          (value) => value instanceof Error || (typeof value === 'object' && value !== null),
        )
      : undefined;
  const copy = new Error(
    redactText(message),
    inner === undefined ? undefined : { cause: redactedCopy(inner, depth + 1) },
  );
  const name = typeof source.name === 'string' ? source.name : 'Error';
  if (name !== 'Error') copy.name = redactText(name);
  copy.stack =
    typeof source.stack === 'string' ? redactText(source.stack) : `${copy.name}: ${copy.message}`;
  for (const key of KEPT_ERROR_FIELDS) {
    const value = source[key];
    if (typeof value === 'string') Object.assign(copy, { [key]: redactText(value) });
    else if (typeof value === 'number' || typeof value === 'boolean') {
      Object.assign(copy, { [key]: value });
    }
  }
  return copy;
}

/**
 * A copy of log fields that is safe to print: values under keys that look like secrets
 * (`token`, `botToken`, `signingSecret`, `password`, `authorization`, `apiKey`, …) become
 * `"[redacted]"`, and bot tokens inside any string are masked. Nested objects and arrays are
 * walked; an `Error` becomes `{ name, message, cause }`.
 *
 * @example
 * ```ts
 * redact({ botToken: 'xoxb-1-2-abc', url: 'https://x/bot1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
 * // { botToken: '[redacted]', url: 'https://x/bot[redacted]' }
 * ```
 */
export function redact(fields: Record<string, unknown>): Record<string, unknown> {
  return redactValue(fields, new WeakSet(), 0) as Record<string, unknown>;
}

/** `keepErrors`: an `Error` becomes a {@link redactError} copy rather than plain fields. */
function redactValue(
  value: unknown,
  seen: WeakSet<object>,
  depth: number,
  keepErrors = false,
): unknown {
  if (typeof value === 'string') return redactText(value);
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return '[circular]';
  if (depth > 8) return '[too deep]';
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      return value.map((item) => redactValue(item, seen, depth + 1, keepErrors));
    }
    if (value instanceof Error && keepErrors) return redactedCopy(value, 0);
    if (value instanceof Error) {
      const plain: Record<string, unknown> = { name: value.name, message: value.message };
      for (const key of ['conversationId', 'messageId', 'code', 'cause'] as const) {
        const field = (value as Error & Record<string, unknown>)[key];
        if (field !== undefined) plain[key] = field;
      }
      return redactValue(plain, seen, depth + 1);
    }
    if (value instanceof Date) return value.toISOString();
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] =
        SECRET_KEY.test(key) && item != null
          ? MASK
          : redactValue(item, seen, depth + 1, keepErrors);
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, item: unknown) =>
      typeof item === 'bigint' ? item.toString() : item,
    );
  } catch {
    return '"[unserializable fields]"';
  }
}
