/**
 * The runs a passing store failure left: which conversations they are in, each drained again
 * on capture's backoff until a pass over it leaves none. The failure is reported once per
 * conversation, however many passes meet it, and one info line says when a pass goes through
 * again. No retry outlives a stop.
 */
import { backoffMs } from '../capture.js';
import type { StoreError } from '../errors.js';
import type { Running } from './running.js';

/** See the file's comment. */
export class LeftRuns {
  /** Each conversation left, with its retries so far and whether the pass under way left runs. */
  readonly #left = new Map<string, { retries: number; leaving: boolean }>();
  /** The retries waiting. */
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor(private readonly bot: Pick<Running, 'options' | 'logger' | 'report' | 'stopping'>) {
    bot.stopping.addEventListener('abort', () => {
      for (const timer of this.#timers) clearTimeout(timer);
      this.#timers.clear();
    });
  }

  /**
   * A pass over the conversation begins: whether runs were left there (the pass reads the
   * ledger then).
   */
  begin(conversationId: string): boolean {
    const left = this.#left.get(conversationId);
    if (left !== undefined) left.leaving = false;
    return left !== undefined;
  }

  /**
   * That pass ended (`passed`: without throwing): when it left runs, `again` drains the
   * conversation after the next backoff; when it left none, the conversation is no longer left.
   */
  end(conversationId: string, passed: boolean, again: () => void): void {
    const left = this.#left.get(conversationId);
    if (left === undefined) return;
    if (left.leaving) return this.later(left.retries++, again);
    this.#left.delete(conversationId);
    const { retries } = left;
    if (passed) {
      this.bot.logger.info('the store reads again: the runs a passing failure left are taken up', {
        conversationId,
        retries,
      });
    }
  }

  /**
   * Notes that a passing store failure (`error`) left runs of the conversation, reported unless
   * it was already since a pass over the conversation last went through.
   */
  leave(conversationId: string, error: StoreError): void {
    const left = this.#left.get(conversationId);
    if (left === undefined) this.bot.report(error);
    this.#left.set(conversationId, { retries: left?.retries ?? 0, leaving: true });
  }

  /** Calls `again` after the backoff of retry `attempt` (capture's), unless the bot stops first. */
  later(attempt: number, again: () => void): void {
    if (this.bot.stopping.aborted) return;
    const timer = setTimeout(
      () => {
        this.#timers.delete(timer);
        again();
      },
      backoffMs(attempt, this.bot.options.capture),
    );
    timer.unref();
    this.#timers.add(timer);
  }
}
