/**
 * How often a fake lets a bot change what one chat or message shows: at most `calls` within any
 * `perMs`, as the platforms limit edits; `false` lets every call through.
 *
 * @example
 * ```ts
 * const slack = await FakeSlack.start({ editLimit: { calls: 1, perMs: 1000 } });
 * ```
 */
export type EditLimit = { calls: number; perMs: number } | false;

/**
 * A sliding window of the edits a fake allowed, by key (a chat, a channel, a message): `take`
 * counts an edit, or says how long to wait when the window is full (the platform's 429).
 *
 * @example
 * ```ts
 * const edits = new EditWindow({ calls: 5, perMs: 5000 });
 * const waitMs = edits.take(`${channelId}`); // undefined: allowed
 * ```
 */
export class EditWindow {
  readonly #limit: EditLimit;
  readonly #seen = new Map<string, number[]>();

  constructor(limit: EditLimit) {
    this.#limit = limit;
  }

  /** Counts one edit under `key`, or returns the ms until one is allowed (not counted then). */
  take(key: string, now = Date.now()): number | undefined {
    if (this.#limit === false) return undefined;
    const { calls, perMs } = this.#limit;
    const recent = (this.#seen.get(key) ?? []).filter((at) => at > now - perMs);
    if (recent.length >= calls) {
      this.#seen.set(key, recent);
      return recent[0]! + perMs - now;
    }
    recent.push(now);
    this.#seen.set(key, recent);
    return undefined;
  }
}
