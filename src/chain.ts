/**
 * The one primitive of the pipeline: an interceptor gets the turn's context and a `next`
 * that runs the rest of the chain. Capture, dedupe, loop guards and agent dispatch are all
 * interceptors.
 *
 * @example
 * ```ts
 * const logTurns: Interceptor = async (ctx, next) => {
 *   console.log(ctx.message.participant.displayName, ctx.message.content);
 *   await next();
 * };
 * ```
 */
export type Next = () => Promise<void>;
export type Interceptor<C = unknown> = (ctx: C, next: Next) => Promise<void>;

/** Composes interceptors into one; each may call `next()` at most once. */
export function compose<C>(interceptors: readonly Interceptor<C>[]): Interceptor<C> {
  return (ctx, last) => {
    let called = -1;
    const dispatch = async (index: number): Promise<void> => {
      if (index <= called) throw new Error('next() called more than once in one interceptor');
      called = index;
      const interceptor = interceptors[index];
      if (interceptor === undefined) return last();
      await interceptor(ctx, () => dispatch(index + 1));
    };
    return dispatch(0);
  };
}
