import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { PostgresConversationStore } from '../../db/postgres/index.js';
import { toInsert } from '../../db/rows.js';
import type { NewMessage } from '../../src/types.js';
import { AGENT, BOT_USER_ID, Corpus, RARE_WORDS } from './corpus.js';
import { type Latency, int, latency, line, ms, note, percentiles, verdict } from './report.js';
import type { Outcome } from './store.js';

/**
 * `colloquy/postgres` on a database of `messages` turns (a tenth of them in one
 * conversation, the rest over 1,000), each figure next to hand-written `pg` statements doing
 * the least the same job needs, in the same run. The server is `COLLOQUY_BENCH_DATABASE_URL`
 * (default the local one); the bench makes a database of its own and drops it after.
 */
export async function benchPostgres(options: { messages: number }): Promise<Outcome[]> {
  const server =
    process.env.COLLOQUY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `colloquy_bench_${process.pid}`;
  const url = Object.assign(new URL(server), { pathname: `/${name}` }).toString();
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const big = Math.floor(options.messages / 10);
  console.log(
    `\n── colloquy/postgres: ${int(options.messages)} turns (${int(big)} in one conversation), vs hand-written pg ──`,
  );
  const store = await PostgresConversationStore.open({ connectionString: url, max: 8 });
  const raw = new pg.Pool({ connectionString: url, max: 8 });
  raw.on('error', () => {});
  const outcomes: Outcome[] = [];
  try {
    const loaded = performance.now();
    const corpus = await load(store.pool, options.messages - big, big);
    console.log(
      note(
        `loaded in ${int((performance.now() - loaded) / 1000)} s (multi-row INSERTs, then ANALYZE)`,
      ),
    );
    outcomes.push(...(await appends(store, raw, corpus)));
    outcomes.push(...(await reads(store, raw, corpus, big)));
  } finally {
    await store.close();
    await raw.end();
    await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin.end();
  }
  return outcomes;
}

const BIG = 'telegram:-42';

/** The busy conversation: the corpus's turns renamed into one conversation of their own. */
function intoBig(turn: NewMessage): NewMessage {
  const messageId = `big-${turn.metadata.messageId}-${turn.id}`;
  return {
    ...turn,
    id: `${BIG}:${messageId}`,
    conversationId: BIG,
    metadata: { ...turn.metadata, channelId: '-42', messageId },
  };
}

/** Writes the corpus with multi-row INSERTs (a load, not what is measured). */
async function load(pool: pg.Pool, spread: number, big: number): Promise<Corpus> {
  const corpus = new Corpus({ conversations: 1000 });
  const bigCorpus = new Corpus({ conversations: 1, seed: 7 });
  const batch = 2000;
  for (let done = 0; done < spread + big; done += batch) {
    const turns: NewMessage[] = [];
    for (let i = done; i < Math.min(done + batch, spread + big); i++) {
      turns.push(i % 10 === 9 && i / 10 < big ? intoBig(bigCorpus.next()) : corpus.next());
    }
    await insertTurns(pool, turns);
  }
  await pool.query(`UPDATE conversations c SET message_count = s.n, last_message_at = s.last,
      created_at = s.first
    FROM (SELECT conversation_id, count(*) AS n, min(timestamp) AS first, max(timestamp) AS last
          FROM messages GROUP BY conversation_id) s WHERE s.conversation_id = c.id`);
  await pool.query('VACUUM ANALYZE');
  return corpus;
}

async function insertTurns(pool: pg.Pool, turns: NewMessage[]): Promise<void> {
  await insertPlaces(pool, turns);
  await insertMessages(pool, turns);
}

/** The participants and conversations of `turns`, where missing. */
async function insertPlaces(pool: pg.Pool, turns: NewMessage[]): Promise<void> {
  const people = new Map(turns.map((t) => [t.participant.id, t.participant]));
  await pool.query(
    `INSERT INTO participants (id, kind, display_name, first_seen_at, last_seen_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $4::timestamptz[])
     ON CONFLICT (id) DO NOTHING`,
    [
      [...people.keys()],
      [...people.values()].map((p) => p.kind),
      [...people.values()].map((p) => p.displayName ?? null),
      [...people.keys()].map(() => turns[0]!.timestamp),
    ],
  );
  const conversations = new Map(turns.map((t) => [t.conversationId, t]));
  await pool.query(
    `INSERT INTO conversations (id, channel_type, channel_id, channel_name, scope, created_at, last_message_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $6::timestamptz[])
     ON CONFLICT (id) DO NOTHING`,
    [
      [...conversations.keys()],
      [...conversations.values()].map((t) => t.metadata.channelType),
      [...conversations.values()].map((t) => t.metadata.channelId),
      [...conversations.values()].map((t) => t.metadata.channelName ?? null),
      [...conversations.values()].map((t) => t.scope),
      [...conversations.values()].map((t) => t.timestamp),
    ],
  );
}

async function insertMessages(pool: pg.Pool, turns: NewMessage[]): Promise<void> {
  const rows = turns.map((turn) => toInsert(turn, turn.timestamp));
  const column = <K extends keyof (typeof rows)[number]>(key: K) => rows.map((row) => row[key]);
  const { rows: inserted } = await pool.query<{ seq: number; id: string }>(
    `INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, scope,
       channel_type, channel_id, platform_message_id, reply_to_message_id,
       reply_to_participant_id, metadata)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[],
       $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::jsonb[])
     RETURNING seq, id`,
    [
      column('id'),
      column('conversationId'),
      column('participantId'),
      column('content'),
      column('timestamp'),
      column('scope'),
      column('channelType'),
      column('channelId'),
      column('platformMessageId'),
      column('replyToMessageId'),
      column('replyToParticipantId'),
      column('metadata'),
    ],
  );
  const seqOf = new Map(inserted.map((row) => [row.id, row.seq]));
  const mentioned = turns.filter((t) => (t.metadata.mentions ?? []).length > 0);
  if (mentioned.length === 0) return;
  await pool.query(
    `INSERT INTO message_mentions (message_seq, conversation_id, participant_id, timestamp)
     SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::timestamptz[])`,
    [
      mentioned.map((t) => seqOf.get(t.id)),
      mentioned.map((t) => t.conversationId),
      mentioned.map(() => BOT_USER_ID),
      mentioned.map((t) => t.timestamp),
    ],
  );
}

async function timed(calls: number, call: (i: number) => Promise<unknown>): Promise<Latency> {
  const samples = new Float64Array(calls);
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    await call(i);
    samples[i] = performance.now() - start;
  }
  return latency(samples);
}

/** Turns per second over `workers` connections, each appending one turn at a time. */
async function concurrently(workers: number, total: number, call: () => Promise<unknown>) {
  const start = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let i = 0; i < total / workers; i++) await call();
    }),
  );
  return (total / (performance.now() - start)) * 1000;
}

const RAW_INSERT = `INSERT INTO messages (id, conversation_id, participant_id, content, timestamp,
    scope, channel_type, channel_id, platform_message_id, metadata)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`;

function rawValues(turn: NewMessage): unknown[] {
  const row = toInsert(turn, turn.timestamp);
  return [
    row.id,
    row.conversationId,
    row.participantId,
    row.content,
    row.timestamp,
    row.scope,
    row.channelType,
    row.channelId,
    row.platformMessageId,
    row.metadata,
  ];
}

async function appends(store: PostgresConversationStore, raw: pg.Pool, corpus: Corpus) {
  const outcomes: Outcome[] = [];
  // The hand-written inserts write turns the store has seen (renamed), so both pay for the
  // same conversations and participants existing already.
  const renamed = (turn: NewMessage, tag: string): NewMessage => ({
    ...turn,
    id: `${turn.id}:${tag}`,
    metadata: { ...turn.metadata, messageId: `${turn.metadata.messageId}:${tag}` },
  });
  // Their participants and conversations exist: the raw INSERT writes the message row only.
  const rawTurns = corpus.take(2000 + 4000 + 4000 + 4000).map((t, i) => renamed(t, `raw${i}`));
  await insertPlaces(raw, rawTurns);
  let r = 0;
  const rawInsert = () => raw.query(RAW_INSERT, rawValues(rawTurns[r++]!));
  const one = await timed(2000, () => store.append(corpus.next()));
  const oneRaw = await timed(2000, rawInsert);
  console.log(
    line(
      'append, 1 connection',
      `${int((one.calls * 1000) / one.totalMs)}/s  ${percentiles(one)}`,
      `raw INSERT ${int((oneRaw.calls * 1000) / oneRaw.totalMs)}/s  ${percentiles(oneRaw)}`,
    ),
  );
  const eight = await concurrently(8, 4000, () => store.append(corpus.next()));
  const eightRaw = await concurrently(8, 4000, rawInsert);
  console.log(line('append, 8 connections', `${int(eight)}/s`, `raw INSERT ${int(eightRaw)}/s`));
  // Group commit: capture hands the store everything waiting as one `commit`.
  const batches = 40;
  const start = performance.now();
  for (let b = 0; b < batches; b++) {
    await store.commit(corpus.take(100).map((message) => ({ kind: 'append' as const, message })));
  }
  const grouped = (batches * 100 * 1000) / (performance.now() - start);
  const rawStart = performance.now();
  for (let b = 0; b < batches; b++) {
    const turns = rawTurns.slice(r, (r += 100));
    const values = turns.flatMap(rawValues);
    const tuples = turns.map(
      (_, i) => `(${Array.from({ length: 10 }, (_, k) => `$${i * 10 + k + 1}`).join(', ')})`,
    );
    await raw.query(
      `${RAW_INSERT.slice(0, RAW_INSERT.indexOf('VALUES'))} VALUES ${tuples.join(', ')}`,
      values,
    );
  }
  const groupedRaw = (batches * 100 * 1000) / (performance.now() - rawStart);
  const pass = grouped >= 5000;
  console.log(
    line(
      '100 at once',
      `${int(grouped)}/s (one commit each)`,
      `raw 100-row INSERT ${int(groupedRaw)}/s`,
      `target ≥ 5,000/s ${verdict(pass)}`,
    ),
  );
  outcomes.push({
    label: `Postgres: 100 concurrent appends ${int(grouped)}/s (target ≥ 5,000)`,
    pass,
  });
  return outcomes;
}

async function reads(
  store: PostgresConversationStore,
  raw: pg.Pool,
  corpus: Corpus,
  bigTurns: number,
) {
  const ids = corpus.conversationIds;
  const pick = (i: number) => ids[(i * 37) % ids.length]!;
  const newest = await timed(500, (i) => store.get(pick(i), { limit: 100 }));
  const newestRaw = await timed(500, (i) =>
    raw.query(
      `SELECT m.*, p.display_name FROM messages m JOIN participants p ON p.id = m.participant_id
      WHERE m.conversation_id = $1 ORDER BY m.timestamp DESC, m.seq DESC LIMIT 100`,
      [pick(i)],
    ),
  );
  const newestPass = newest.p50 < 3;
  console.log(
    line(
      'get newest 100',
      percentiles(newest),
      `raw SELECT ${percentiles(newestRaw)}`,
      `target p50 < 3 ms ${verdict(newestPass)}`,
    ),
  );

  // A planted rare word, and the words of the conversation's first turns (common ones mostly).
  const { rows } = await raw.query<{ content: string }>(
    'SELECT content FROM messages WHERE conversation_id = $1 ORDER BY seq LIMIT 5',
    [BIG],
  );
  const words = [RARE_WORDS[0]!, ...rows.flatMap((row) => row.content.split(' ').slice(0, 2))];
  const search = await timed(200, (i) => store.search(BIG, words[i % words.length]!));
  const searchRaw = await timed(200, (i) =>
    raw.query(
      `SELECT seq, content FROM messages WHERE conversation_id = $1
      AND search @@ phraseto_tsquery('colloquy', $2) ORDER BY seq DESC LIMIT 10`,
      [BIG, words[i % words.length]],
    ),
  );
  const searchPass = search.p50 < 8;
  console.log(
    line(
      `search, ${int(bigTurns)} turns`,
      percentiles(search),
      `raw tsquery top 10 ${percentiles(searchRaw)}`,
      `target p50 < 8 ms ${verdict(searchPass)}`,
    ),
  );

  const aliases = { aliases: [AGENT.id, BOT_USER_ID] };
  const addressed = await timed(300, (i) =>
    store.get(i % 2 === 0 ? BIG : pick(i), { concerning: aliases, limit: 100 }),
  );
  const addressedRaw = await timed(300, (i) =>
    raw.query(
      `SELECT m.* FROM messages m WHERE m.conversation_id = $1 AND NOT m.is_summary
      AND m.deleted_at IS NULL AND (m.participant_id = ANY($2) OR m.scope = 'dm'
        OR m.reply_to_participant_id = ANY($2) OR EXISTS (SELECT 1 FROM message_mentions mm
          WHERE mm.message_seq = m.seq AND mm.participant_id = ANY($2)))
      ORDER BY m.timestamp DESC, m.seq DESC LIMIT 100`,
      [i % 2 === 0 ? BIG : pick(i), aliases.aliases],
    ),
  );
  const addressedPass = addressed.p50 < 10;
  console.log(
    line(
      'addressed-only 100',
      percentiles(addressed),
      `raw OR-filter ${percentiles(addressedRaw)}`,
      `target p50 < 10 ms ${verdict(addressedPass)}`,
    ),
  );
  console.log(
    note(
      `search words ${words.join(' ')} in ${BIG}; addressed-only alternates ${BIG} and the 1,000 others (${ms(addressed.p99)} p99)`,
    ),
  );
  return [
    { label: `Postgres: get newest 100 p50 ${ms(newest.p50)} (target < 3 ms)`, pass: newestPass },
    {
      label: `Postgres: search in a ${int(bigTurns)}-turn conversation p50 ${ms(search.p50)} (target < 8 ms)`,
      pass: searchPass,
    },
    {
      label: `Postgres: addressed-only p50 ${ms(addressed.p50)} (target < 10 ms)`,
      pass: addressedPass,
    },
  ];
}
