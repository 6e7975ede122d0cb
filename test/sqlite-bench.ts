/**
 * Measures the SQLite store on generated data. Not a test: run it by hand.
 *
 *   npx tsx test/sqlite-bench.ts [dir]
 *
 * - append: store.append vs raw prepared better-sqlite3 inserts of the same rows;
 * - get(concerning): newest 100 turns concerning the agent in a 100,000-turn conversation
 *   where it is addressed once in 100;
 * - search: p50 / p95 in a 1,000,000-turn database (1,000 conversations), rare and common words.
 *
 * The databases are generated once per `dir` and reused. A file from an older colloquy is
 * migrated first (timed), so pointing `dir` at an old run measures the migration at scale.
 * Every line reports CPU time per call next to wall time: on a shared machine it is the
 * steadier number.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SqliteConversationStore } from '../db/index.js';
import type { NewMessage } from '../src/types.js';

const dir = process.argv[2] ?? '/tmp/colloquy-bench';
mkdirSync(dir, { recursive: true });

const VOCAB = (
  'the to a is and you it of for in on that this with can we be have not are do order ' +
  'refund invoice deploy build ticket please thanks help account password shipping ' +
  'delivery payment error server login update status issue fixed broken today tomorrow ' +
  'week customer support question answer email phone address card bank transfer team ' +
  'meeting release version bug feature test review merge branch commit pipeline cache'
).split(' ');

let seed = 42;
function random(): number {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
}
/** Zipf-ish: the first words are far more common. */
function word(): string {
  return VOCAB[Math.floor(VOCAB.length * random() ** 2.5)]!;
}
function sentence(): string {
  const n = 4 + Math.floor(random() * 14);
  return Array.from({ length: n }, word).join(' ');
}
function ts(i: number): string {
  return new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
}

function turn(
  i: number,
  conversation: string,
  extra: Partial<NewMessage['metadata']> = {},
  participant = `telegram:${1000 + (i % 7)}`,
): NewMessage {
  return {
    id: `${conversation}:${i}`,
    conversationId: conversation,
    participant: {
      kind: participant === 'support-agent' ? 'agent' : 'user',
      id: participant,
      displayName: `User ${participant}`,
    },
    content: sentence(),
    timestamp: ts(i),
    scope: 'channel',
    metadata: {
      channelType: 'telegram',
      channelId: conversation,
      messageId: String(i),
      mentions: [],
      ...extra,
    },
  };
}

function time<T>(fn: () => T): [T, number] {
  const start = performance.now();
  const value = fn();
  return [value, performance.now() - start];
}
async function timeAsync<T>(fn: () => Promise<T>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/**
 * Fills a file fast: participants and conversations first, then the messages and mentions
 * with plain INSERTs in 50,000-row transactions (the FTS triggers fire per row, as in use).
 */
function generate(path: string, count: number, make: (i: number) => NewMessage): void {
  const store = new SqliteConversationStore({ path });
  const db = store.db;
  const participant = db.prepare(`INSERT OR IGNORE INTO participants VALUES (?, ?, ?, ?, ?)`);
  const conversation = db.prepare(
    `INSERT OR IGNORE INTO conversations (id, channel_type, channel_id, scope, created_at, last_message_at) VALUES (?, 'telegram', ?, 'channel', ?, ?)`,
  );
  const message = db.prepare(
    `INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, scope, channel_type, channel_id, platform_message_id, reply_to_participant_id) VALUES (?, ?, ?, ?, ?, 'channel', 'telegram', ?, ?, ?)`,
  );
  const mention = db.prepare(`INSERT INTO message_mentions VALUES (?, ?, ?, ?)`);
  const batch = db.transaction((from: number) => {
    for (let i = from; i < Math.min(count, from + 50_000); i++) {
      const m = make(i);
      participant.run(
        m.participant.id,
        m.participant.kind,
        m.participant.displayName ?? null,
        m.timestamp,
        m.timestamp,
      );
      conversation.run(m.conversationId, m.metadata.channelId, m.timestamp, m.timestamp);
      const seq = message.run(
        m.id,
        m.conversationId,
        m.participant.id,
        m.content,
        m.timestamp,
        m.metadata.channelId,
        m.metadata.messageId ?? null,
        m.metadata.replyToParticipantId ?? null,
      ).lastInsertRowid;
      for (const p of m.metadata.mentions) mention.run(seq, m.conversationId, p, m.timestamp);
    }
  });
  for (let from = 0; from < count; from += 50_000) {
    batch(from);
    process.stdout.write(`  ${from + 50_000} rows\r`);
  }
  db.exec(
    `UPDATE conversations SET message_count = (SELECT count(*) FROM messages m WHERE m.conversation_id = conversations.id), last_message_at = (SELECT max(timestamp) FROM messages m WHERE m.conversation_id = conversations.id)`,
  );
  void store.close();
}

/** Opens the file writable once, which migrates it if an older colloquy wrote it. */
function migrate(path: string): void {
  const [store, ms] = time(() => new SqliteConversationStore({ path }));
  void store.close();
  if (ms > 100) console.log(`opened (and migrated) ${path} in ${(ms / 1000).toFixed(1)} s`);
}

async function benchAppend(): Promise<void> {
  const n = 20_000;
  const rows = Array.from({ length: n }, (_, i) =>
    turn(i, `telegram:${i % 50}`, { mentions: i % 10 ? [] : ['support-agent'] }),
  );
  for (const path of ['append-store.db', 'append-raw.db']) rmSync(join(dir, path), { force: true });
  const store = new SqliteConversationStore({ path: join(dir, 'append-store.db') });
  const storeMs = await timeAsync(async () => {
    for (const row of rows) await store.append(row);
  });
  await store.close();
  // Raw: the same rows, one prepared INSERT into messages per row in its own transaction,
  // on a migrated file (same indexes and FTS triggers).
  const raw = new SqliteConversationStore({ path: join(dir, 'append-raw.db') });
  const db = raw.db;
  db.prepare(`INSERT INTO participants VALUES ('p', 'user', null, 'x', 'x')`).run();
  const insertConv = db.prepare(
    `INSERT OR IGNORE INTO conversations (id, channel_type, channel_id, scope, created_at, last_message_at) VALUES (?, 'telegram', ?, 'channel', ?, ?)`,
  );
  for (let c = 0; c < 50; c++) insertConv.run(`telegram:${c}`, `telegram:${c}`, 'x', 'x');
  const insert = db.prepare(
    `INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, scope, channel_type, channel_id, platform_message_id, metadata) VALUES (?, ?, 'p', ?, ?, 'channel', 'telegram', ?, ?, '{}')`,
  );
  const one = db.transaction((r: NewMessage) =>
    insert.run(
      r.id,
      r.conversationId,
      r.content,
      r.timestamp,
      r.metadata.channelId,
      r.metadata.messageId,
    ),
  );
  const [, rawMs] = time(() => {
    for (const r of rows) one.immediate(r);
  });
  await raw.close();
  console.log(
    `append: store ${((n / storeMs) * 1000).toFixed(0)}/s, raw ${((n / rawMs) * 1000).toFixed(0)}/s, ratio ${((rawMs / storeMs) * 100).toFixed(0)}%`,
  );
}

async function benchConcerning(): Promise<void> {
  const path = join(dir, 'concerning.db');
  if (!existsSync(path)) {
    const c = 'telegram:busy';
    generate(path, 100_000, (i) =>
      i % 300 === 0
        ? turn(i, c, { mentions: ['telegram:99'] })
        : i % 300 === 100
          ? turn(i, c, { replyToParticipantId: 'support-agent' })
          : i % 300 === 200
            ? turn(i, c, {}, 'support-agent')
            : turn(i, c),
    );
  }
  migrate(path);
  const store = new SqliteConversationStore({ path, readonly: true });
  const aliases = ['support-agent', 'telegram:99', '@orders_bot'];
  const samples: number[] = [];
  let count = 0;
  const cpu = process.cpuUsage();
  for (let i = 0; i < 200; i++) {
    samples.push(
      await timeAsync(async () => {
        count = (await store.get('telegram:busy', { concerning: { aliases }, limit: 100 })).length;
      }),
    );
  }
  const used = process.cpuUsage(cpu);
  const plain: number[] = [];
  for (let i = 0; i < 200; i++)
    plain.push(await timeAsync(() => store.get('telegram:busy', { limit: 100 })));
  console.log(
    `get concerning (100k turns, 1 in 100 relevant, ${count} rows): p50 ${percentile(samples, 0.5).toFixed(3)} ms, p95 ${percentile(samples, 0.95).toFixed(3)} ms, cpu/call ${((used.user + used.system) / 200 / 1000).toFixed(3)} ms; plain get p50 ${percentile(plain, 0.5).toFixed(3)} ms`,
  );
  await store.close();
}

async function benchSearch(): Promise<void> {
  const path = join(dir, 'search-1m.db');
  if (!existsSync(path)) {
    const started = performance.now();
    generate(path, 1_000_000, (i) => {
      const m = turn(i, `telegram:${i % 1000}`);
      if (i % 50_000 === 7) m.content += ' zanzibar';
      return m;
    });
    console.log(`generated 1M turns in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
  migrate(path);
  const store = new SqliteConversationStore({ path, readonly: true });
  const queries: [string, string, string?][] = [
    ['rare word, absent', 'zanzibar'],
    ['rare word, present', 'zanzibar', 'telegram:7'],
    ['common word', 'the'],
    ['common words', 'the to a is and'],
    ['mid words', 'refund invoice'],
  ];
  for (const [label, query, only] of queries) {
    const samples: number[] = [];
    let found = 0;
    const cpu = process.cpuUsage();
    for (let i = 0; i < 300; i++) {
      const conversation = only ?? `telegram:${(i * 37) % 1000}`;
      samples.push(
        await timeAsync(async () => {
          found += (await store.search(conversation, query)).length;
        }),
      );
    }
    const used = process.cpuUsage(cpu);
    console.log(
      `search ${label} ${JSON.stringify(query)}: p50 ${percentile(samples, 0.5).toFixed(3)} ms, ` +
        `p95 ${percentile(samples, 0.95).toFixed(3)} ms, cpu/call ` +
        `${((used.user + used.system) / 300 / 1000).toFixed(3)} ms (${(found / 300).toFixed(1)} results avg)`,
    );
  }
  await store.close();
}

await benchAppend();
await benchConcerning();
await benchSearch();
