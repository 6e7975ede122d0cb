import type { RedisCommander } from './scripts.js';

/** A run of members of one sorted set that share a prefix (`''` for a whole set). */
export interface Lane {
  key: string;
  prefix: string;
}

/**
 * The stamps (`<timestamp>:<seq>`) of several lanes merged newest first, each once, within
 * `[since, before)`: how `get` reads the turns that concern an agent (its own, those that
 * mention it, those that reply to it, DMs) without reading the others. Each lane is read
 * `batch` members at a time, below the last member read, so turns written meanwhile never
 * shift a page.
 *
 * @example
 * ```ts
 * for await (const stamp of newestFirst(client, [{ key, prefix: '' }], {}, 100)) …
 * ```
 */
export async function* newestFirst(
  client: RedisCommander,
  lanes: Lane[],
  bounds: { since?: string; before?: string },
  batch: number,
): AsyncGenerator<string> {
  const state = lanes.map((lane) => ({
    ...lane,
    upper: `(${lane.prefix}${bounds.before ?? '\x7f'}`,
    lower: `[${lane.prefix}${bounds.since ?? ''}`,
    buffer: [] as string[],
    done: false,
  }));
  const seen = new Set<string>();
  for (;;) {
    const empty = state.filter((lane) => lane.buffer.length === 0 && !lane.done);
    await Promise.all(
      empty.map(async (lane) => {
        const members = (await client.sendCommand([
          'ZRANGE',
          lane.key,
          lane.upper,
          lane.lower,
          'BYLEX',
          'REV',
          'LIMIT',
          '0',
          `${batch}`,
        ])) as string[];
        lane.buffer = members.map((member) => member.slice(lane.prefix.length));
        if (members.length < batch) lane.done = true;
        else lane.upper = `(${members[members.length - 1]}`;
      }),
    );
    let newest: (typeof state)[number] | undefined;
    for (const lane of state) {
      const head = lane.buffer[0];
      if (head !== undefined && (newest === undefined || head > newest.buffer[0]!)) newest = lane;
    }
    if (newest === undefined) return;
    const stamp = newest.buffer.shift()!;
    if (seen.has(stamp)) continue;
    seen.add(stamp);
    yield stamp;
  }
}
