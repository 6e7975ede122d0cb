/**
 * What `committed` resolves with, or undefined once it rejects or `stopping` is aborted (a
 * write capture holds for a retry, waited for no longer than the bot runs). Never rejects.
 *
 * @example
 * ```ts
 * const result = await eventually(tracked.committed, bot.stopping); // undefined: never here
 * ```
 */
export function eventually<T>(
  committed: Promise<T>,
  stopping: AbortSignal,
): Promise<T | undefined> {
  if (stopping.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const stop = () => resolve(undefined);
    stopping.addEventListener('abort', stop, { once: true });
    void committed
      .then(resolve, () => resolve(undefined))
      .finally(() => stopping.removeEventListener('abort', stop));
  });
}
