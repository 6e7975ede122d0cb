import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { benchAssemble } from './assemble.js';
import type { Timing } from './assemble.js';
import { int, line, ms, note, peakRss, verdict } from './report.js';
import type { Outcome } from './store.js';
import { removeDb } from './store-write.js';

export interface AssembleSectionOptions {
  /** Turns in the one conversation (default 100,000). */
  messages?: number;
  /** Folder for the database file. */
  dir: string;
  /** Timed runs of each variant (default 500). */
  iterations?: number;
}

function figures(t: Timing): string {
  return `p50 ${ms(t.p50)}  p99 ${ms(t.p99)}`;
}

/**
 * `assemblePrompt` on one long conversation where the agent is addressed once in
 * 100 turns, next to load-latest-then-filter baselines. The measuring is `benchAssemble`
 * (test/bench/assemble.ts); this prints it.
 */
export async function benchAssembleSection(options: AssembleSectionOptions): Promise<Outcome[]> {
  const messages = options.messages ?? 100_000;
  const dir = join(options.dir, 'assemble');
  mkdirSync(dir, { recursive: true });
  removeDb(join(dir, 'assemble.db')); // benchAssemble's file; a reused --dir must start empty
  console.log(
    `\n── Assemble: one conversation of ${int(messages)} turns, agent addressed in 1 of 100 ──`,
  );
  const r = await benchAssemble({
    messages,
    addressedEvery: 100,
    maxTurnsToLoad: 100,
    tokenBudget: 3000,
    iterations: options.iterations ?? 500,
    dir,
  });
  const wide = r.latestWideThenFilter;
  const pass = r.assemble.p50 < 2;
  console.log(
    line(
      'assemblePrompt',
      figures(r.assemble),
      `latest ${int(wide.rowsLoaded)} + filter ${figures(wide)}`,
      `p50 < 2 ms ${verdict(pass)}`,
    ),
  );
  console.log(
    note(
      `assemblePrompt (maxTurnsToLoad 100, tokenBudget 3000) read the turns concerning the ` +
        `agent in the store and kept ${r.assemble.turnsIncluded} (${int(r.assemble.tokens)} tokens)`,
    ),
  );
  console.log(
    note(
      `baseline: plain get of the newest ${int(wide.rowsLoaded)} turns, then concerns() in JS ` +
        `(enough to expect 100 relevant; found ${wide.relevantFound})`,
    ),
  );
  console.log(
    line(
      'get(concerning) alone',
      figures(r.concerningGet),
      `latest 100 + filter ${figures(r.latestThenFilter)}`,
    ),
  );
  console.log(
    note(
      `get(concerning) found ${r.concerningGet.relevantFound} relevant turns; the newest 100 ` +
        `turns filtered hold only ${r.latestThenFilter.relevantFound}`,
    ),
  );
  console.log(
    note(
      `${int(r.relevantTurns)} of ${int(r.messages)} turns concern the agent; filled with ` +
        `store.append in 5,000-turn transactions in ${(r.fillMs / 1000).toFixed(1)} s; ` +
        `peak memory so far ${peakRss()}`,
    ),
  );
  return [{ label: 'assemblePrompt p50 < 2 ms', pass }];
}
