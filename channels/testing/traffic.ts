/** What a fake's `traffic` returns: how many were sent so far, and how to stop. */
export interface SteadyTraffic {
  /** How many events were sent so far. */
  readonly sent: number;
  /** Stops sending; resolves once every send started has settled. */
  stop(): Promise<void>;
}

/**
 * Calls `send(0)`, `send(1)`, … at `perSecond` a second, evenly spread, until `stop()`; a
 * send that returns a promise is not waited for (a slow bot does not slow the traffic down),
 * and its rejection is ignored. The fakes' `traffic` methods drive a bot with it.
 *
 * @example
 * ```ts
 * const traffic = steadyTraffic(50, (i) => telegram.sendUserMessage({ chat, from: ada, text: `#${i}` }));
 * // … kill and restart the bot meanwhile …
 * await traffic.stop();
 * console.log(traffic.sent);
 * ```
 */
export function steadyTraffic(perSecond: number, send: (index: number) => unknown): SteadyTraffic {
  if (!(perSecond > 0))
    throw new RangeError(`steadyTraffic: perSecond must be > 0, not ${perSecond}`);
  const started = performance.now();
  const pending = new Set<Promise<unknown>>();
  let sent = 0;
  const tick = () => {
    const due = Math.floor(((performance.now() - started) / 1000) * perSecond);
    while (sent < due) {
      const result = send(sent++);
      if (result instanceof Promise) {
        const settled = result.then(
          () => undefined,
          () => undefined,
        );
        pending.add(settled);
        void settled.then(() => pending.delete(settled));
      }
    }
  };
  const timer = setInterval(tick, Math.max(5, Math.min(100, 1000 / perSecond)));
  return {
    get sent() {
      return sent;
    },
    async stop() {
      clearInterval(timer);
      while (pending.size > 0) await Promise.all([...pending]);
    },
  };
}
