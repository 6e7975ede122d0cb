import type { Channel, ChannelHandlers } from '../channel.js';
import { ColloquyError } from '../errors.js';
import { commandsProblem, registerCommands } from '../interactions.js';
import { consoleLogger, logLevelProblem } from '../logger.js';
import type { Logger } from '../logger.js';
import { agentsOn, allAgents } from './options.js';
import type { BotOptions } from './options.js';
import type { Parts } from './parts.js';

/** How long `Bot.start` waits for its channels to connect, unless told otherwise. */
export const DEFAULT_START_TIMEOUT_MS = 60_000;

/** The longest delay `setTimeout` keeps (about 24.8 days); a longer bound waits unbounded. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The start bound: `given` (`BotOptions.startTimeoutMs`), else `COLLOQUY_START_TIMEOUT_MS`,
 * else {@link DEFAULT_START_TIMEOUT_MS}. Throws a one-line `ColloquyError` on a value that is
 * not a positive number of milliseconds.
 *
 * @example
 * ```ts
 * startTimeoutOf(undefined, { COLLOQUY_START_TIMEOUT_MS: '5000' }); // 5000
 * ```
 */
export function startTimeoutOf(
  given: number | undefined,
  env: Record<string, string | undefined> = process.env,
): number {
  const text = env.COLLOQUY_START_TIMEOUT_MS?.trim();
  const [ms, name] =
    given !== undefined
      ? [given, 'BotOptions.startTimeoutMs']
      : text
        ? [Number(text), 'COLLOQUY_START_TIMEOUT_MS']
        : [DEFAULT_START_TIMEOUT_MS, ''];
  if (ms > 0) return ms; // Infinity included: a start that waits as long as it takes
  throw new ColloquyError(
    `${name} must be a positive number of milliseconds, not "${given ?? text}"`,
  );
}

/**
 * Starts `channel`, or rejects once `deadline` (a `Date.now()` time, `boundMs` after the bot
 * began to start) has passed with a
 * `ColloquyError` that names the channel and, as its cause, the last error it reported while
 * it tried: a platform that cannot be reached, a token refused, an event it could not read.
 * The channel goes on trying in the background until it is stopped.
 *
 * @example
 * ```ts
 * await startWithin(discord, handlers, Date.now() + 60_000, 60_000);
 * ```
 */
export async function startWithin(
  channel: Channel,
  handlers: ChannelHandlers,
  deadline: number,
  boundMs: number,
): Promise<void> {
  let starting = true;
  let last: ColloquyError | undefined;
  const started = channel.start({
    ...handlers,
    error: (error) => {
      if (starting) last = error;
      handlers.error(error);
    },
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    const ms = Math.max(0, deadline - Date.now());
    if (ms > MAX_TIMER_MS) return;
    timer = setTimeout(() => {
      const seconds = Math.round(boundMs / 100) / 10;
      const why =
        last === undefined
          ? 'it reported no error'
          : `last error: ${last.message.replace(/\s*\n\s*/g, ' ')}`;
      const message = `the ${channel.type} channel did not start within ${seconds} s (${why})`;
      reject(new ColloquyError(message, { cause: last }));
    }, ms);
  });
  try {
    await Promise.race([started, timedOut]);
  } finally {
    starting = false;
    clearTimeout(timer);
    started.catch(() => undefined); // a start given up on: its late failure is not unhandled
  }
}

/**
 * What stops a start before any file is opened or platform called: a bad log level (for the
 * console logger), a command that names no agent of the bot, or a second channel of a type a
 * bot takes one of (Telegram); undefined when none.
 *
 * @example
 * ```ts
 * const problem = startProblem(options, consoleLogger);
 * if (problem !== undefined) throw new ColloquyError(problem);
 * ```
 */
export function startProblem(options: BotOptions, logger: Logger): string | undefined {
  const logLevel = logger === consoleLogger ? logLevelProblem() : undefined;
  if (logLevel !== undefined) return logLevel;
  const agentIds = allAgents(options.agents).map((a) => a.id);
  return commandsProblem(options.commands, agentIds) ?? channelsProblem(options.channels);
}

/** A second channel of a type that allows one per bot (`Channel.onePerBot`), named with why. */
function channelsProblem(channels: readonly Channel[]): string | undefined {
  const alone = channels.find(
    (c) => c.onePerBot !== undefined && channels.some((o) => o !== c && o.type === c.type),
  );
  return alone && `a bot takes one ${alone.type} channel: ${alone.onePerBot}`;
}

/**
 * Registers `BotOptions.commands` on every channel that takes them, each with the ids of the
 * agents on it; a channel that refuses is reported, never thrown.
 *
 * @example
 * ```ts
 * await registerBotCommands(options, (e) => bot.report(e));
 * ```
 */
export async function registerBotCommands(
  options: BotOptions,
  report: (error: ColloquyError) => void,
): Promise<void> {
  const { commands } = options;
  if (commands === undefined || commands.length === 0) return;
  await registerCommands(
    options.channels,
    commands,
    (channel) => agentsOn(options.agents, channel).map((agent) => agent.id),
    (cause, type) => report(new ColloquyError(`could not register commands on ${type}`, { cause })),
  );
}

/**
 * Resumes the work a stop or crash left in `agent_runs`: alone, all of it now; shared, only
 * what no instance holds, now and every `claimEveryMs` (whenever an instance dies). Answers
 * the timer of that sweep, for `stop` to clear.
 */
export async function resumeWork({ leases, drain }: Parts): Promise<NodeJS.Timeout | undefined> {
  if (leases === undefined) {
    await drain.recover();
    return undefined;
  }
  await drain.sweep();
  const sweeper = setInterval(() => void drain.sweep(), leases.claimEveryMs);
  sweeper.unref();
  return sweeper;
}
