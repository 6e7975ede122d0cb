/**
 * A fake platform's pause between doing what a call asked (creating a message) and answering
 * it: a client that dies meanwhile made the call without learning its result.
 */
export class AnswerDelay {
  readonly #range: [number, number];
  #held = 0;

  /** `ms`: how long each answer waits, or a range to draw from (0: answer at once). */
  constructor(ms: number | [number, number] = 0) {
    this.#range = typeof ms === 'number' ? [ms, ms] : ms;
  }

  /** Answers created and still held back. */
  get held(): number {
    return this.#held;
  }

  /** The wait before one answer, or undefined to answer at once (no tick lost). */
  wait(): Promise<void> | undefined {
    const [min, max] = this.#range;
    const ms = min + Math.random() * (max - min);
    if (ms <= 0) return undefined;
    this.#held++;
    return new Promise<void>((resolve) => setTimeout(resolve, ms)).finally(() => this.#held--);
  }
}
