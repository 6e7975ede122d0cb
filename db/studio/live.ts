import type { StudioSource, Turn } from './source.js';

/** Turns a live transcript shows at most; older edits are seen on reload. */
const WATCHED = 100;

/**
 * Tells subscribers when the store changed, for the live transcript. One timer for the whole
 * server, running only while someone listens: each tick asks the source's `changeMark` (for
 * SQLite, `PRAGMA data_version`, which moves when another connection commits: no table is
 * read; else its live cursor) and only when it moved do subscribers read the turns after the
 * cursor they reached, a range of an index. A bot capturing into the same WAL file costs the studio one
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
  private mark: number | string | undefined;

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
    let mark: number | string;
    try {
      mark = this.source.changeMark ? this.source.changeMark() : await this.source.liveCursor();
    } catch {
      return; // the file is busy or gone for a moment: the next tick asks again
    }
    if (mark === this.mark) return;
    this.mark = mark;
    for (const listener of this.listeners) listener();
  }
}

/** What changed for a live page: a new turn, or an edit / deletion of one it shows. */
export interface TurnEvent {
  kind: 'turn' | 'change';
  turn: Turn;
}

/**
 * What a live transcript has not seen yet: turns committed after its cursor, and, for one
 * conversation, edits and deletions of its newest turns (the newest screen, read again and
 * compared with what was sent). Tool steps are left to a reload: they are folded under the
 * reply they belong to.
 */
export class TurnWatch {
  private readonly seen = new Map<number, string>();

  constructor(
    private readonly source: StudioSource,
    private after: string,
    private readonly conversationId: string | undefined,
  ) {}

  /** Remembers how the newest screen looks now. */
  async start(): Promise<void> {
    if (this.conversationId === undefined) return;
    const { turns } = await this.source.turns(this.conversationId, { limit: WATCHED });
    for (const turn of turns) this.seen.set(turn.seq, signature(turn));
  }

  async changes(): Promise<TurnEvent[]> {
    const events: TurnEvent[] = [];
    if (this.conversationId !== undefined && this.seen.size > 0) {
      const { turns } = await this.source.turns(this.conversationId, { limit: WATCHED });
      for (const turn of turns) {
        const before = this.seen.get(turn.seq);
        if (before === undefined || before === signature(turn) || turn.tool) continue;
        this.seen.set(turn.seq, signature(turn));
        events.push({ kind: 'change', turn });
      }
    }
    for (;;) {
      const { turns, cursor } = await this.source.turnsAfter(this.after, 200, this.conversationId);
      this.after = cursor;
      for (const turn of turns) {
        events.push({ kind: 'turn', turn });
        if (this.conversationId !== undefined) this.seen.set(turn.seq, signature(turn));
      }
      if (turns.length < 200) return events;
    }
  }
}

function signature(turn: Turn): string {
  return JSON.stringify([
    turn.content,
    turn.editedAt,
    turn.deletedAt,
    turn.runs.map((r) => r.status),
  ]);
}

/**
 * Runs `task` one call at a time: a call made while one runs is folded into one more run
 * after it, so no change is missed and none is read twice at once.
 */
export function serialized(task: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again = false;
  const run = async (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await task();
        } while (again);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  return run;
}
