/**
 * The work a bot has in flight (events being handled, agent runs, confirmations): `idle` and
 * `stop` wait for it, and a channel asks for room (`capacity`) before it hands over more.
 */
export class InFlight {
  readonly #work = new Set<Promise<void>>();
  /** How many units of `#work` count against `capacity` (events handed over). */
  #counted = 0;
  /** Callers of `capacity`, each waiting for fewer than `limit` units in flight. */
  #roomWaiters: { limit: number; resolve: () => void }[] = [];

  constructor(private readonly report: (error: unknown) => void) {}

  /**
   * Runs one unit of work as in flight (from the moment it is queued), so `stop` can wait for
   * it; never rejects (a failure goes to `report`). `counted`: false for work that is not an
   * event handed over (a drain's pass, which its turns' units already count).
   */
  track(work: () => Promise<void>, counted = true): Promise<void> {
    const run = work()
      .catch((error: unknown) => this.report(error))
      .finally(() => {
        this.#work.delete(run);
        if (counted) this.#counted--;
        this.#roomWaiters = this.#roomWaiters.filter((waiter) => {
          if (this.#counted >= waiter.limit) return true;
          waiter.resolve();
          return false;
        });
      });
    this.#work.add(run);
    if (counted) this.#counted++;
    return run;
  }

  /** Resolves once fewer than `limit` units are in flight. */
  capacity(limit: number): Promise<void> {
    if (this.#counted < limit) return Promise.resolve();
    return new Promise((resolve) => this.#roomWaiters.push({ limit, resolve }));
  }

  /** Resolves once nothing is in flight, what the work in flight started included. */
  async idle(): Promise<void> {
    while (this.#work.size > 0) await Promise.allSettled([...this.#work]);
  }
}
