import type { NewMessage, PlatformMessageRef } from './types.js';

/**
 * The order events are committed in. The events of one conversation are handed to capture one
 * after another in the order they arrived (a turn a channel is still completing holds back the
 * later turns of its conversation); different conversations go on concurrently. What runs
 * agents afterwards has its own queue (the drain, `bot/drain.ts`).
 *
 * Messages are queued by `conversationId`. Edits and deletions carry no conversation, only the
 * platform ref `(channelType, channelId, messageId)`, so they are queued by the ref of the
 * message they change: while work about that message is queued or running (its turn, an
 * earlier edit) the change joins that work's queue, behind it; otherwise nothing in this
 * process is left to order it against, and it gets a queue of its own. The ref is the key both
 * sides share: it is exactly what the store matches an edit to its turn with (`recordEdit`),
 * so any edit the store can record names its message this way, on every platform.
 *
 * `channelType + channelId` would be simpler but too coarse: a Slack channel's threads, a
 * Discord channel's threads (their turns carry the parent's id) and a Telegram forum's topics
 * would all wait on one another.
 *
 * Only keys and refs with work pending are held: both maps empty as their queues drain.
 *
 * @example
 * ```ts
 * const order = new TurnOrder((error) => console.error(error));
 * void order.message(turn, async () => {
 *   await capture.write({ kind: 'append', message: turn });
 * });
 * // Runs after the turn's work when `edit` names the same platform message.
 * await order.change(edit, async () => {
 *   await capture.write({ kind: 'edit', edit });
 * });
 * ```
 */
export class TurnOrder {
  /** The last work queued per key. */
  readonly #tails = new Map<string, Promise<void>>();
  /** Per platform message with work pending: the key that work is queued under, and how much. */
  readonly #pending = new Map<string, { key: string; count: number }>();
  readonly #onError: (error: unknown) => void;

  /** `onError` (which must not throw) gets what a piece of work threw; the next work runs regardless. */
  constructor(onError: (error: unknown) => void) {
    this.#onError = onError;
  }

  /** How many queues have work pending (0 once everything has run). */
  get size(): number {
    return this.#tails.size;
  }

  /** Whether work is queued or running under `key` (a conversation id). */
  has(key: string): boolean {
    return this.#tails.has(key);
  }

  /** Whether work about the platform message `ref` is queued or running. */
  hasRef(ref: PlatformMessageRef): boolean {
    return this.#pending.has(refKey(ref));
  }

  /** Runs a new turn's `work` after the work queued before it in its conversation. Never rejects. */
  message(message: NewMessage, work: () => Promise<void>): Promise<void> {
    const { channelType, channelId, messageId } = message.metadata;
    const ref = messageId === undefined ? undefined : { channelType, channelId, messageId };
    return this.#run(message.conversationId, ref, work);
  }

  /**
   * Runs an edit's or deletion's `work` after the work pending about the same platform message
   * (with none pending, on its own). Never rejects.
   */
  change(ref: PlatformMessageRef, work: () => Promise<void>): Promise<void> {
    const key = this.#pending.get(refKey(ref))?.key ?? `\u0000${refKey(ref)}`;
    return this.#run(key, ref, work);
  }

  #run(key: string, ref: PlatformMessageRef | undefined, work: () => Promise<void>) {
    const id = ref === undefined ? undefined : refKey(ref);
    if (id !== undefined) {
      this.#pending.set(id, { key, count: (this.#pending.get(id)?.count ?? 0) + 1 });
    }
    // The tail never rejects, so `work` runs whatever the work before it did.
    const turn: Promise<void> = (this.#tails.get(key) ?? Promise.resolve())
      .then(work)
      .catch(this.#onError)
      .finally(() => {
        if (this.#tails.get(key) === turn) this.#tails.delete(key);
        if (id !== undefined) this.#release(id);
      });
    this.#tails.set(key, turn);
    return turn;
  }

  #release(id: string): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    if (pending.count > 1) pending.count--;
    else this.#pending.delete(id);
  }
}

/**
 * One string per platform message: `(channelType, channelId, messageId)`.
 *
 * @example
 * ```ts
 * refKey({ channelType: 'slack', channelId: 'C1', messageId: '1700.01' });
 * ```
 */
export function refKey(ref: PlatformMessageRef): string {
  return `${ref.channelType}\u0000${ref.channelId}\u0000${ref.messageId}`;
}
