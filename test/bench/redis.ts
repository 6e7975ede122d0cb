import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createClient } from 'redis';
import { RedisConversationStore } from '../../db/redis/index.js';
import { SqliteConversationStore } from '../../db/sqlite/index.js';
import type { ConversationStore } from '../../src/store.js';
import { BOT_USER_ID, AGENT, Corpus } from './corpus.js';
import { type Latency, int, latency, line, note, percentiles, perSecond } from './report.js';
import type { Outcome } from './store.js';

/**
 * `colloquy/redis` next to the SQLite store (a file) on the same turns: appends awaited one
 * at a time (as capture commits a store without `commit`), then the reads an agent makes
 * (the newest 100, the addressed-only 20) and a search, in 100 conversations. No target:
 * the figures say what a deployment on Redis costs. Needs the Redis at `REDIS_URL`
 * (default 127.0.0.1:6379); its keys go under a prefix of their own, deleted after.
 */
export async function benchRedis(options: { messages: number; dir: string }): Promise<Outcome[]> {
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const turns = Math.min(options.messages, 20_000);
  console.log(`\n── colloquy/redis: ${int(turns)} turns in 100 conversations, vs SQLite ──`);
  const client = createClient({ url });
  client.on('error', () => undefined);
  await client.connect();
  const keyPrefix = `colloquy-bench:${process.pid}:`;
  const redis = new RedisConversationStore({ client, keyPrefix });
  const sqlite = SqliteConversationStore.open(join(options.dir, 'redis-baseline.db'));
  try {
    const ours = await measure(redis, turns);
    const theirs = await measure(sqlite, turns);
    for (const key of Object.keys(ours) as (keyof Figures)[]) {
      const a = ours[key];
      const b = theirs[key];
      console.log(
        line(
          key,
          `${perSecond(a.calls, a.totalMs)}  ${percentiles(a)}`,
          `SQLite ${perSecond(b.calls, b.totalMs)}  ${percentiles(b)}`,
        ),
      );
    }
    console.log(note(`Redis at ${url}, one connection; SQLite a WAL file in ${options.dir}`));
  } finally {
    for await (const keys of client.scanIterator({ MATCH: `${keyPrefix}*`, COUNT: 1000 })) {
      if (keys.length > 0) await client.unlink(keys);
    }
    client.destroy();
    await sqlite.close();
  }
  return [];
}

interface Figures {
  append: Latency;
  'get newest 100': Latency;
  'get addressed 20': Latency;
  'search one word': Latency;
}

async function measure(store: ConversationStore, turns: number): Promise<Figures> {
  const corpus = new Corpus({ conversations: 100 });
  const time = async (calls: number, call: (i: number) => Promise<unknown>): Promise<Latency> => {
    const samples = new Float64Array(calls);
    for (let i = 0; i < calls; i++) {
      const start = performance.now();
      await call(i);
      samples[i] = performance.now() - start;
    }
    return latency(samples);
  };
  const append = await time(turns, () => store.append(corpus.next()));
  const ids = corpus.conversationIds;
  const pick = (i: number) => ids[(i * 37) % ids.length]!;
  const aliases = { aliases: [AGENT.id, BOT_USER_ID] };
  return {
    append,
    'get newest 100': await time(500, (i) => store.get(pick(i), { limit: 100 })),
    'get addressed 20': await time(500, (i) =>
      store.get(pick(i), { concerning: aliases, limit: 20 }),
    ),
    'search one word': await time(500, (i) => store.search(pick(i), corpus.rareWordOf(pick(i)))),
  };
}
