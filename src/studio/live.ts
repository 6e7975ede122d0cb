import type { StudioSource } from './source.js';

/**
 * Tells subscribers when the store changed, for the live transcript. One timer for the whole
 * server, running only while someone listens: each tick asks the source's `changeMark` (for
 * SQLite, `PRAGMA data_version`, which moves when another connection commits: no table is
 * read) and only when it moved do subscribers read the turns after the last `seq` they sent,
 * a range of the rowid index. A bot capturing into the same WAL file costs the studio one
 * pragma per tick while nothing happens.
 *
 * @example
 * ```ts
 * const feed = new LiveFeed(source, 500);
 * const stop = feed.subscribe(() => void sendNewTurns());
 * ```
 */
export class LiveFeed {
  private readonly listeners = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private mark: number | undefined;

  constructor(
    private readonly source: StudioSource,
    private readonly intervalMs: number,
  ) {}

  /** Calls `listener` after each change; returns the unsubscribe. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    if (this.timer === undefined) {
      this.timer = setInterval(() => void this.tick(), this.intervalMs);
      this.timer.unref();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.mark = undefined;
  }

  private async tick(): Promise<void> {
    let mark: number;
    try {
      mark = this.source.changeMark ? this.source.changeMark() : await this.source.latestSeq();
    } catch {
      return; // the file is busy or gone for a moment: the next tick asks again
    }
    if (mark === this.mark) return;
    this.mark = mark;
    for (const listener of this.listeners) listener();
  }
}
