import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { SqliteConversationStore, SqliteStudioSource } from '../../db/sqlite/index.js';
import { populate } from '../fixtures/populate.js';
import { sqlExamples } from '../fixtures/sql-examples.js';
import { Corpus } from './corpus.js';
import { int, line, ms, note } from './report.js';
import { removeDb } from './store-write.js';

const PERSON = 'telegram:100236';
const CONVERSATION = 'telegram:-1001000000023';

/** A timed call, on the store and the studio opened on the file. */
type Call = [string, (store: SqliteConversationStore, studio: SqliteStudioSource) => unknown];

/** The store's and the studio's reads that name a person, an agent or a conversation. */
const READS: Call[] = [
  ['store.get', (store) => store.get(CONVERSATION, { limit: 100 })],
  ['get by author', (store) => store.get(CONVERSATION, { participantIds: [PERSON] })],
  [
    'get concerning an agent',
    (store) => store.get(CONVERSATION, { concerning: { aliases: ['support-agent'] } }),
  ],
  ['listConversations', (store) => store.listConversations({ participantId: PERSON })],
  ['search', (store) => store.search(CONVERSATION, 'you refund')],
  ['studio conversations', (_, studio) => studio.conversations({ limit: 50, participant: PERSON })],
  ['studio search', (_, studio) => studio.search('refund', 50)],
  ['studio turns', (_, studio) => studio.turns(CONVERSATION, { limit: 100 })],
  ['studio unanswered', (_, studio) => studio.unanswered(50)],
  ['studio overview', (_, studio) => studio.overview(7)],
  ['studio people', (_, studio) => studio.participants(500, { counts: true })],
  ['studio person', (_, studio) => studio.participant(PERSON)],
];

/** The median of up to 5 runs within a second; a call slower than that runs once. */
async function time(run: () => unknown): Promise<number> {
  const spent: number[] = [];
  const until = performance.now() + 1000;
  do {
    const start = performance.now();
    await run();
    spent.push(performance.now() - start);
  } while (spent.length < 5 && performance.now() < until);
  return spent.sort((a, b) => a - b)[spent.length >> 1]!;
}

/**
 * docs/sql.md's example queries, and the store's and studio's reads, on the docs' history plus
 * `messages` corpus turns, as the file comes (no statistics) and after `ANALYZE`, which a user
 * may run and which changes SQLite's plans: a plan that reads `messages` again for each person
 * shows here (docs/benchmarks.md, "SQL queries with planner statistics").
 */
export async function benchSql(options: { messages: number; dir: string }): Promise<void> {
  console.log(`\n── docs/sql.md's queries and the store's reads, without and with ANALYZE ──`);
  const path = join(options.dir, 'sql-docs.db');
  removeDb(path);
  const store = SqliteConversationStore.open(path);
  await populate(store);
  const corpus = new Corpus({ seed: 12 });
  for (let done = 0; done < options.messages; done += 500) {
    const turns = corpus.take(Math.min(500, options.messages - done));
    await store.commit(turns.map((message) => ({ kind: 'append', message })));
  }
  await store.close();

  const examples = sqlExamples('sql.md');
  const calls: Call[] = [
    ...examples.map(({ title, sql }): Call => [title, (s) => s.db.prepare(sql).all()]),
    ...READS,
  ];
  const times = async (): Promise<number[]> => {
    const opened = SqliteConversationStore.open(path);
    const studio = SqliteStudioSource.open(path);
    try {
      const spent: number[] = [];
      for (const [, call] of calls) spent.push(await time(() => call(opened, studio)));
      return spent;
    } finally {
      await studio.close();
      await opened.close();
    }
  };
  const without = await times();
  new Database(path).exec('ANALYZE').close();
  const analyzed = await times();
  removeDb(path);

  const describe = (i: number) =>
    `${calls[i]![0]}: ${ms(analyzed[i]!)} (without ${ms(without[i]!)})`;
  const ratio = (i: number) => analyzed[i]! / without[i]!;
  const report = (label: string, from: number, to: number) => {
    const range = Array.from({ length: to - from }, (_, k) => from + k);
    const sum = (values: number[]) => range.reduce((total, i) => total + values[i]!, 0);
    console.log(
      line(
        label,
        `${range.length} calls, ${ms(sum(analyzed))} with`,
        `${ms(sum(without))} without`,
      ),
    );
    const slowest = [...range].sort((a, b) => analyzed[b]! - analyzed[a]!).slice(0, 3);
    console.log(note(`slowest with statistics: ${slowest.map(describe).join('; ')}`));
    const worst = [...range].sort((a, b) => ratio(b) - ratio(a))[0]!;
    console.log(note(`most slowed: ${describe(worst)}, ${ratio(worst).toFixed(1)}×`));
  };
  report('docs/sql.md examples', 0, examples.length);
  report('store, studio reads', examples.length, calls.length);
  console.log(
    note(
      `on the docs' history plus ${int(options.messages)} corpus turns ` +
        `(${int(corpus.conversationIds.length)} conversations); the median of up to 5 runs each`,
    ),
  );
}
