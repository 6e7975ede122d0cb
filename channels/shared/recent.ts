/**
 * Remembers the most recent keys, forgetting the oldest past `capacity`: how channels drop a
 * platform event delivered twice (a Slack retry, a Discord replay after RESUME, a Telegram
 * update redelivered) before it reaches the store.
 *
 * @example
 * ```ts
 * const seen = new RecentKeys<string>(1000);
 * seen.add('Ev123'); // true: new
 * seen.add('Ev123'); // false: seen recently
 * ```
 */
export class RecentKeys<K> {
  private readonly keys = new Set<K>();

  constructor(private readonly capacity: number) {}

  /** True when `key` is remembered. */
  has(key: K): boolean {
    return this.keys.has(key);
  }

  /** Remembers `key`; false when it was already remembered. */
  add(key: K): boolean {
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    if (this.keys.size > this.capacity) {
      const oldest = this.keys.values().next().value as K;
      this.keys.delete(oldest);
    }
    return true;
  }
}
