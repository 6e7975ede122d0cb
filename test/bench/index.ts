/**
 * `npm run bench`: colloquy's performance report. Every figure is printed next to a baseline
 * measured in the same run and the target with PASS / MISS. Nothing here is asserted by the
 * unit tests.
 *
 *   npm run bench -- [--messages 1000000] [--only store|writes|assemble|pipeline|studio|sql|redis|postgres|instances|latency]
 *                    [--store postgres] [--dir path]
 *                    [--events 64000] [--senders 16] [--turns 20]
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { benchAssembleSection } from './assemble-section.js';
import { benchLatency } from './latency.js';
import { benchPipeline } from './pipeline.js';
import { benchPostgres } from './postgres.js';
import { benchPostgresInstances } from './postgres-instances.js';
import { benchPostgresPipeline } from './postgres-pipeline.js';
import { benchRedis } from './redis.js';
import { int, peakRss, verdict } from './report.js';
import { benchSql } from './sql.js';
import { benchStudio } from './studio.js';
import { type Outcome, benchStore } from './store.js';
import { benchWrites } from './writes.js';

const SECTIONS = [
  'store',
  'writes',
  'assemble',
  'pipeline',
  'studio',
  'sql',
  'redis',
  'postgres',
  'instances',
  'latency',
] as const;
type Section = (typeof SECTIONS)[number];

const USAGE = `usage: npm run bench -- [options]
  --messages N   turns in the store benchmark's database, in 1,000 conversations (default 1,000,000)
  --only S       run one section: store | writes | assemble | pipeline | studio | sql | redis | postgres
                 | instances | latency
  --store postgres  the Postgres section alone (same as --only postgres; COLLOQUY_BENCH_DATABASE_URL)
  --dir PATH     keep the database files in PATH (default: a temporary folder, deleted after)
  --events N     inbound Telegram updates per pipeline variant (default 64,000)
  --senders N    people writing to the pipeline's bot at once, each waiting for the answer
                 (default 16; Telegram's own webhook default is up to 40 connections)
  --turns N      answers per platform in the latency section (default 20)`;

function count(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const n = Number(value.replaceAll(/[,_]/g, ''));
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
}

/** Other work on the machine skews every figure; say how busy it was. */
function load(): string {
  const [one, five] = loadavg().map((n) => n.toFixed(1));
  const busy = (loadavg()[0] ?? 0) > cpus().length;
  return `load average ${one} (1 min), ${five} (5 min)${busy ? ' — the machine is busy, figures are pessimistic' : ''}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      messages: { type: 'string' },
      only: { type: 'string' },
      dir: { type: 'string' },
      events: { type: 'string' },
      senders: { type: 'string' },
      turns: { type: 'string' },
      store: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) {
    console.log(USAGE);
    return;
  }
  const messages = count(values.messages, 1_000_000, 'messages');
  const events = count(values.events, 64000, 'events');
  const senders = count(values.senders, 16, 'senders');
  const turns = count(values.turns, 20, 'turns');
  if (values.store !== undefined && values.store !== 'postgres') {
    throw new Error('--store takes postgres (the SQLite store is the default sections)');
  }
  const only = (values.store === 'postgres' ? 'postgres' : values.only) as Section | undefined;
  if (only !== undefined && !SECTIONS.includes(only)) {
    throw new Error(`--only must be one of ${SECTIONS.join(', ')}`);
  }
  const dir =
    values.dir === undefined ? mkdtempSync(join(tmpdir(), 'colloquy-bench-')) : resolve(values.dir);
  mkdirSync(dir, { recursive: true });

  const started = performance.now();
  console.log(
    `colloquy bench · node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`,
  );
  console.log(`database files in ${dir}${values.dir === undefined ? ' (deleted after)' : ''}`);
  console.log(load());
  const outcomes: Outcome[] = [];
  try {
    const runs = (section: Section) => only === undefined || only === section;
    if (runs('store')) outcomes.push(...(await benchStore({ messages, dir })));
    if (runs('writes')) outcomes.push(...(await benchWrites({ dir })));
    if (runs('assemble')) {
      outcomes.push(
        ...(await benchAssembleSection({ messages: Math.min(messages, 100_000), dir })),
      );
    }
    if (runs('pipeline')) outcomes.push(...(await benchPipeline({ events, dir, senders })));
    if (runs('studio')) {
      outcomes.push(...(await benchStudio({ messages: Math.min(messages, 100_000), dir })));
    }
    if (runs('sql')) await benchSql({ messages: Math.min(messages, 100_000), dir });
    if (runs('redis')) outcomes.push(...(await benchRedis({ messages, dir })));
    if (runs('postgres')) {
      outcomes.push(...(await benchPostgres({ messages })));
      outcomes.push(
        ...(await benchPostgresPipeline({ events: Math.min(events, 4000), senders: 8 })),
      );
    }
    if (runs('instances')) await benchPostgresInstances({ seconds: 8 });
    if (runs('latency')) outcomes.push(...(await benchLatency({ turns, dir })));
  } finally {
    if (values.dir === undefined) rmSync(dir, { recursive: true, force: true });
  }

  const passed = outcomes.filter((o) => o.pass).length;
  console.log(`\n── Targets: ${passed} of ${outcomes.length} met ──`);
  for (const outcome of outcomes) console.log(`${verdict(outcome.pass)}  ${outcome.label}`);
  const seconds = (performance.now() - started) / 1000;
  console.log(`\nwall time ${int(seconds)} s · peak memory (maxRSS) ${peakRss()} · ${load()}`);
}

await main();
