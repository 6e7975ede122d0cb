import { formatCount } from './format.js';

/** Redraws at most this often (about ten times a second). */
const MIN_INTERVAL_MS = 100;
const BAR_WIDTH = 30;

/**
 * A one-line progress bar on a stream (stderr): `[#####·····] 1,000/2,000  50%`, redrawn in
 * place with `\r` and throttled to about ten updates a second.
 *
 * @example
 * ```ts
 * const bar = new ProgressBar(process.stderr, total);
 * for (const row of rows) bar.tick();
 * bar.finish();
 * ```
 */
export class ProgressBar {
  private count = 0;
  private lastDraw = Number.NEGATIVE_INFINITY;
  private drawnCount = -1;

  constructor(
    private readonly stream: NodeJS.WritableStream,
    private readonly total: number,
    private readonly label = 'exporting',
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Counts `n` more items and redraws if the last redraw is old enough. */
  tick(n = 1): void {
    this.count += n;
    const now = this.now();
    if (now - this.lastDraw >= MIN_INTERVAL_MS) {
      this.lastDraw = now;
      this.draw();
    }
  }

  /** Draws the final state and ends the line. */
  finish(): void {
    if (this.drawnCount !== this.count) this.draw();
    this.stream.write('\n');
  }

  private draw(): void {
    this.drawnCount = this.count;
    const fraction = this.total === 0 ? 1 : Math.min(1, this.count / this.total);
    const filled = Math.round(fraction * BAR_WIDTH);
    const bar = `${'#'.repeat(filled)}${'·'.repeat(BAR_WIDTH - filled)}`;
    const percent = `${Math.floor(fraction * 100)}%`.padStart(4);
    this.stream.write(
      `\r${this.label} [${bar}] ${formatCount(this.count)}/${formatCount(this.total)} ${percent}`,
    );
  }
}
