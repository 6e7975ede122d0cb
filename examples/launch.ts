/**
 * What every example does the same way: read the model and the HTTP port from the
 * environment, refuse bad settings in one clear message, and start the bot with its errors
 * printed (tokens redacted) and Ctrl-C / SIGTERM stopping it cleanly.
 */
import { type Bot, modelFromEnv, redactText } from 'colloquy';

/** Prints the message and exits with status 1. */
export function exitWith(message: string): never {
  console.error(message);
  process.exit(1);
}

/** The model `COLLOQUY_MODEL` names (the offline model when unset); exits on a bad value. */
export function modelOrExit(): ReturnType<typeof modelFromEnv> {
  try {
    return modelFromEnv();
  } catch (error) {
    // e.g. an unknown provider, or a provider without its API key
    return exitWith(error instanceof Error ? error.message : String(error));
  }
}

/**
 * What `open` returns; when it throws (a bad `COLLOQUY_DB`: a directory, a missing folder, a
 * file that is not a colloquy database), exits with one `colloquy: …` line instead.
 *
 * @example
 * ```ts
 * const store = await openOrExit(() => SqliteConversationStore.open(defaultDbPath()));
 * ```
 */
export async function openOrExit<T>(open: () => T | Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    return exitWith(
      `colloquy: ${redactText(error instanceof Error ? error.message : String(error))}`,
    );
  }
}

/**
 * The http(s) URL in the environment variable `name` (an API base override), or undefined
 * when it is unset; exits with one line when it is set to something else.
 *
 * @example
 * ```ts
 * const apiRoot = urlFromEnv('TELEGRAM_API_ROOT');
 * ```
 */
export function urlFromEnv(name: string): string | undefined {
  const value = process.env[name]?.trim();
  if (!value) return undefined;
  const protocol = URL.canParse(value) ? new URL(value).protocol : undefined;
  if (protocol === 'http:' || protocol === 'https:') return value;
  return exitWith(`${name} must be an http(s) URL such as http://127.0.0.1:8080, not "${value}"`);
}

/**
 * `PORT` (default 3000) and, when it is not a port number, the line that says so.
 *
 * @example
 * ```ts
 * const { port, problem } = portFromEnv();
 * if (problem) exitWith(problem);
 * ```
 */
export function portFromEnv(): { port: number; problem?: string } {
  const text = process.env.PORT ?? '3000';
  const port = Number(text);
  if (Number.isInteger(port) && port >= 0 && port < 65536) return { port };
  return { port, problem: `PORT must be a port number (0 picks a free one), not "${text}".` };
}

/**
 * Prints the bot's errors (tokens redacted), lets Ctrl-C / SIGTERM finish the turns in flight,
 * flush capture and close the db, and starts it; exits with one line if it cannot start.
 */
export async function launch(bot: Bot): Promise<void> {
  bot.catch((error) => console.error(`[${error.name}] ${redactText(error.message)}`));
  bot.installSignalHandlers();
  try {
    await bot.start();
  } catch (error) {
    console.error(
      `Could not start: ${redactText(error instanceof Error ? error.message : String(error))}`,
    );
    await bot.stop();
    process.exit(1);
  }
}
