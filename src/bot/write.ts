import { setMaxListeners } from 'node:events';
import type { Capture } from '../capture.js';
import { StoreError } from '../errors.js';
import type { StoreOperation } from '../store.js';

/**
 * Writes `op` through capture and resolves once it is committed, after however many retries
 * a passing failure takes (a deadlock, a serialization failure, a lost connection): a run
 * waits for its record rather than giving up on it. Rejects when capture gives up on the op
 * (refused for good, or unwritten at close), or with the passing failure once `stopping`
 * aborts, so that a bot stopping while its store is away does not wait for it.
 *
 * @example
 * ```ts
 * await writeCommitted(capture, { kind: 'run', run }, stopping.signal);
 * ```
 */
export function writeCommitted(
  capture: Capture,
  op: StoreOperation,
  stopping: AbortSignal,
): Promise<unknown> {
  const { answered, committed } = capture.track(op);
  committed.catch(() => {}); // awaited only when the first try failed
  return answered.catch((error: unknown) => {
    if (error instanceof StoreError && error.transient === false) throw error;
    if (stopping.aborted) throw error;
    return new Promise((resolve, reject) => {
      const stop = () => reject(error);
      stopping.addEventListener('abort', stop, { once: true });
      void committed
        .then(resolve, reject)
        .finally(() => stopping.removeEventListener('abort', stop));
    });
  });
}

/**
 * A controller of the bot's stop: any number of runs, typing indicators and writes may wait on
 * its signal at once (one listener each; many conversations at once), with no warning about
 * listeners.
 *
 * @example
 * ```ts
 * const stopping = stoppingController();
 * ```
 */
export function stoppingController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
