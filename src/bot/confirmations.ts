/**
 * The confirmations of replies sent and not committed yet, by conversation: a turn's work is
 * done, for the turns after it, once its replies are on the platform, and their confirmations
 * (platform ids, the run answered) commit behind. A conversation's lease is held, and a
 * delivery is handled, once they are committed.
 */
export class Confirmations {
  readonly #pending = new Map<string, Set<Promise<void>>>();

  /** `track` keeps each confirmation in flight, so `idle` and `stop` wait for it. */
  constructor(private readonly track: (work: Promise<void>) => void) {}

  /** Keeps a reply's confirmation (never rejecting) until it is committed or failed. */
  add(conversationId: string, confirmation: Promise<void>): void {
    const pending = this.#pending.get(conversationId) ?? new Set<Promise<void>>();
    this.#pending.set(conversationId, pending);
    const tracked = confirmation.finally(() => {
      pending.delete(tracked);
      if (pending.size === 0 && this.#pending.get(conversationId) === pending)
        this.#pending.delete(conversationId);
    });
    pending.add(tracked);
    this.track(tracked);
  }

  /** Resolves once the confirmations kept so far in the conversation are settled. */
  async settled(conversationId: string): Promise<void> {
    await Promise.all(this.#pending.get(conversationId) ?? []);
  }
}
