import { SqliteConversationStore } from 'colloquy/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { populate } from '../../fixtures/populate.js';
import { sqlExamples } from '../../fixtures/sql-examples.js';

const docs = sqlExamples('sql.md');

describe('docs/sql.md', () => {
  let store: SqliteConversationStore;
  beforeAll(async () => {
    store = new SqliteConversationStore({ path: ':memory:' });
    await populate(store);
  });
  afterAll(() => store.close());

  it('has at least twelve example queries, each under its own heading', () => {
    expect(docs.length).toBeGreaterThanOrEqual(12);
    expect(new Set(docs.map((d) => d.title)).size).toBe(docs.length);
  });

  it.each(docs.map((d) => [d.title, d.sql] as const))('%s: runs and returns rows', (_, sql) => {
    const rows = store.db.prepare(sql).all();
    expect(rows.length).toBeGreaterThanOrEqual(1);
  });

  it('finds exactly the unanswered mention, what the bot told Alice on Tuesday, and who talks most', () => {
    const run = (title: string) => {
      const example = docs.find((d) => d.title.startsWith(title));
      return store.db.prepare(example!.sql).all() as Record<string, unknown>[];
    };
    expect(run('Turns that mentioned the bot').map((r) => r.content)).toEqual([
      '<@UBOT> can you reset my password?',
    ]);
    expect(run('What did the bot tell Alice').map((r) => r.text)).toEqual([
      'Yes: invoice 88 qualifies for a refund; it will reach your card within 5 days.',
    ]);
    expect(run('Who talks most').slice(0, 3)).toEqual([
      { who: 'Support', kind: 'agent', turns: 11 },
      { who: 'Alice Martin', kind: 'user', turns: 8 },
      { who: 'Bob Chen', kind: 'user', turns: 7 },
    ]);
  });

  it('searches every conversation in one plain query that gives each turn with its text and speaker', () => {
    const example = docs.find((d) => d.title === 'Search every conversation for a word');
    const rows = store.db.prepare(example!.sql).all() as Record<string, unknown>[];
    expect(rows.length).toBeGreaterThanOrEqual(4);
    for (const row of rows) {
      expect(row.text).toMatch(/\brefund\b/i);
      expect(row.speaker).toEqual(expect.any(String));
    }
    expect(rows).toContainEqual(
      expect.objectContaining({
        conversation_id: 'telegram:5551002',
        speaker: 'Dave',
        text: 'Did my refund go through?',
      }),
    );
  });

  it('finds the reply that cited a document, its model call, and the titled conversation', () => {
    const run = (title: string) => {
      const example = docs.find((d) => d.title === title);
      return store.db.prepare(example!.sql).all() as Record<string, unknown>[];
    };
    const refund = 'Yes: invoice 88 qualifies for a refund; it will reach your card within 5 days.';
    expect(run('Which answers cited a document')).toEqual([
      expect.objectContaining({ position: 1, chunk: '2', score: 0.91, content: refund }),
    ]);
    expect(run('The model call behind a reply')).toEqual([
      expect.objectContaining({ trace_id: 'chatcmpl-refund-88', content: refund }),
    ]);
    expect(run('Every PDF people sent in the last month')).toEqual([
      expect.objectContaining({ sender: 'Alice Martin', name: 'invoice-march.pdf', size: 245760 }),
    ]);
    expect(
      run('Answers people thumbed down in the last week').map((r) => [r.who, r.answer]),
    ).toEqual([['Bob Chen', 'Yes, the pipeline clears the cache after every deploy.']]);
    expect(run('Conversations by title and metadata')).toEqual([
      expect.objectContaining({ title: 'Refund for invoice 88', ticket: 'T-88', message_count: 3 }),
    ]);
  });

  it('counts the buttons people press per agent, and the commands they run', () => {
    const run = (title: string) => {
      const example = docs.find((d) => d.title === title);
      return store.db.prepare(example!.sql).all() as Record<string, unknown>[];
    };
    expect(run('Which buttons people press, per agent')).toEqual([
      { agent: 'billing-agent', button: 'approve', value: 'approve', presses: 1, people: 1 },
    ]);
    expect(run('Commands people run, and the ones the bot does not know')).toEqual([
      { command: 'refund', refused: null, runs: 1, last_run: '2026-03-05T09:00:00.000Z' },
    ]);
  });
});
