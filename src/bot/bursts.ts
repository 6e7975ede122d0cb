import type { NewMessage } from '../types.js';

/**
 * What an agent does with a burst — turns a person sends while the agent is busy or in quick
 * succession: `queue` answers each in order; `latest` answers only the newest of those waiting;
 * `debounce` waits until the person has paused for `quietMs`, then answers the newest. Every
 * turn is recorded whatever the mode, and the newest turn's prompt holds the ones before it.
 */
export type BurstMode = 'queue' | 'latest' | 'debounce';

/**
 * A burst mode, with the quiet time `debounce` waits for (default 1500 ms).
 *
 * @example
 * ```ts
 * const bot = new Bot({ channels, agents, bursts: { mode: 'debounce', quietMs: 2000 } });
 * ```
 */
export type BurstOption = BurstMode | { mode: BurstMode; quietMs?: number };

/** The quiet time of `debounce` when none is given. */
export const DEFAULT_QUIET_MS = 1500;

/**
 * Which turns of a burst are answered. A person's turn is noted when it is committed
 * (`arrived`); when its agent is about to run, `newer` says whether a later turn of the same
 * person answers it instead. Turns are keyed by conversation, agent and person, so several
 * people in one channel each get their answer.
 *
 * @example
 * ```ts
 * const bursts = new Bursts(() => 'latest', signal);
 * bursts.arrived(hey, 'support');
 * bursts.arrived(reset, 'support');
 * await bursts.newer(hey, 'support'); // reset.id: the answer to reset answers hey too
 * ```
 */
export class Bursts {
  /** The newest turn noted per key, and when it came. */
  readonly #newest = new Map<string, { id: string; at: number }>();

  constructor(
    private readonly optionOf: (agentId: string, turn: NewMessage) => BurstOption,
    private readonly signal: AbortSignal,
  ) {}

  /** Notes a person's turn for `agentId`, committed with its pending run. */
  arrived(turn: NewMessage, agentId: string): void {
    if (this.#mode(agentId, turn).mode === 'queue') return;
    this.#newest.set(key(turn, agentId), { id: turn.id, at: Date.now() });
  }

  /**
   * Before `agentId` answers `turn`: the id of a later turn of the same burst that is answered
   * instead, or `undefined` to answer this one. In `debounce` it first waits until the person
   * has been quiet for `quietMs` (or the bot stops).
   */
  async newer(turn: NewMessage, agentId: string): Promise<string | undefined> {
    const k = key(turn, agentId);
    if (this.#newest.get(k) === undefined) return undefined;
    const { mode, quietMs } = this.#mode(agentId, turn);
    if (mode === 'debounce') await this.#quiet(k, quietMs);
    const newest = this.#newest.get(k);
    if (newest === undefined || newest.id === turn.id) {
      this.#newest.delete(k);
      return undefined;
    }
    return newest.id;
  }

  async #quiet(k: string, quietMs: number): Promise<void> {
    for (;;) {
      const newest = this.#newest.get(k);
      const wait = newest === undefined ? 0 : newest.at + quietMs - Date.now();
      if (wait <= 0 || this.signal.aborted) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, wait);
        this.signal.addEventListener('abort', done);
      });
    }
  }

  #mode(agentId: string, turn: NewMessage): { mode: BurstMode; quietMs: number } {
    const option = this.optionOf(agentId, turn);
    return typeof option === 'string'
      ? { mode: option, quietMs: DEFAULT_QUIET_MS }
      : { mode: option.mode, quietMs: option.quietMs ?? DEFAULT_QUIET_MS };
  }
}

function key(turn: NewMessage, agentId: string): string {
  return `${turn.conversationId}\u0000${agentId}\u0000${turn.participant.id}`;
}
