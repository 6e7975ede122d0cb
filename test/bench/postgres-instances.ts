import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { PostgresConversationStore } from '../../db/postgres/index.js';
import type { NewMessage } from '../../src/types.js';
import { int, line, note } from './report.js';

const BOT = { kind: 'agent', id: 'support-agent', displayName: 'Support' } as const;
/** Conversations each instance works on at once. */
const AT_ONCE = 10;

/**
 * What two instances of one bot on one Postgres do to each other's writes: each of two stores
 * (two pools, as two processes have) records replies of the same bot in `AT_ONCE`
 * conversations of its own, one reply per commit, for `seconds`; then one store asks again
 * and again for leases the other holds (what an instance waiting for a busy conversation
 * does). The server is `COLLOQUY_BENCH_DATABASE_URL` (default the local one).
 */
export async function benchPostgresInstances(options: { seconds: number }): Promise<void> {
  const server =
    process.env.COLLOQUY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `colloquy_bench_instances_${process.pid}`;
  const url = Object.assign(new URL(server), { pathname: `/${name}` }).toString();
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  console.log(`\n── two instances on one Postgres: ${AT_ONCE} conversations each ──`);
  const stores = [
    await PostgresConversationStore.open(url),
    await PostgresConversationStore.open(url),
  ] as const;
  try {
    const replies = await repliesOfOneBot(stores, options.seconds * 1000);
    console.log(line('replies of one bot', `${int(replies)} commits/s`, 'one reply per commit'));
    const attempts = await busyLeases(stores, options.seconds * 1000);
    console.log(line('busy lease asked for', `${int(attempts)} attempts/s`, 'held by the other'));
    console.log(note('each figure is both stores together; one connection per conversation'));
  } finally {
    for (const store of stores) await store.close();
    await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin.end();
  }
}

/** Commits a second: both stores recording the bot's replies, each in its own conversations. */
async function repliesOfOneBot(
  stores: readonly PostgresConversationStore[],
  ms: number,
): Promise<number> {
  let n = 0;
  const reply = (conversation: number): NewMessage => {
    n++;
    return {
      id: `reply-${n}`,
      conversationId: `telegram:${conversation}`,
      participant: BOT,
      content: `reply ${n}`,
      timestamp: new Date().toISOString(),
      scope: 'dm',
      metadata: { channelType: 'telegram', channelId: String(conversation), messageId: `${n}` },
    };
  };
  let commits = 0;
  const started = performance.now();
  const until = started + ms;
  await Promise.all(
    stores.flatMap((store, s) =>
      Array.from({ length: AT_ONCE }, async (_, i) => {
        while (performance.now() < until) {
          const [result] = await store.commit([{ kind: 'reply', message: reply(s * 100 + i) }]);
          if (result?.ok !== true) throw new Error('a reply was not committed');
          commits++;
        }
      }),
    ),
  );
  return (commits * 1000) / (performance.now() - started);
}

/** Attempts a second to take leases the other store holds (every attempt finds them held). */
async function busyLeases(
  [holder, other]: readonly PostgresConversationStore[],
  ms: number,
): Promise<number> {
  const names = Array.from({ length: AT_ONCE }, (_, i) => `conversation:telegram:${i}`);
  for (const name of names) await holder!.acquireLease!(name, 'holder', 600_000);
  let attempts = 0;
  const started = performance.now();
  const until = started + ms;
  await Promise.all(
    names.map(async (name) => {
      while (performance.now() < until) {
        if ((await other!.acquireLease!(name, 'other', 600_000)) !== undefined) {
          throw new Error(`${name} was taken while held`);
        }
        attempts++;
      }
    }),
  );
  return (attempts * 1000) / (performance.now() - started);
}
