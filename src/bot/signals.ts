import type { Logger } from '../logger.js';

/** What the signal handlers need of the bot. */
export interface Stoppable {
  stop(): Promise<void>;
  /** Turns handed over and not yet answered. */
  pending(): number;
  /** Writes left in the dead-letter file once stopped. */
  deadLettered(): number;
  logger: Logger;
}

/**
 * SIGINT / SIGTERM stop `bot` gracefully, saying what is still being finished; a second
 * signal exits at once (status 130). Returns a function that removes the handlers.
 */
export function installSignalHandlers(bot: Stoppable): () => void {
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) process.exit(130);
    signalled = true;
    bot.logger.info(`${signal}: ${stoppingNotice(signal, bot.pending())}`);
    void bot.stop().finally(() => {
      uninstall();
      // Writes left in the dead-letter file: the process says so with its exit code.
      if (bot.deadLettered() > 0) process.exitCode = 1;
    });
  };
  const uninstall = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return uninstall;
}

/**
 * What stopping does: `finishing 1 answer — Ctrl-C again to quit now`, or `stopping` when
 * nothing is left to answer.
 */
export function stoppingNotice(signal: NodeJS.Signals, pending: number): string {
  if (pending === 0) return 'stopping';
  const again = signal === 'SIGINT' ? 'Ctrl-C' : `${signal}`;
  return `finishing ${pending} answer${pending === 1 ? '' : 's'} — ${again} again to quit now`;
}
