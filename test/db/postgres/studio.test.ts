import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStudioSource, copyFromSqlite } from 'colloquy/postgres';
import { SqliteConversationStore, SqliteStudioSource } from 'colloquy/sqlite';
import { createStudioApp, startStudio } from '../../../db/studio/server.js';
import type { StudioSource } from '../../../db/studio/source.js';
import { createStudioDb, turn } from '../../fixtures/studio-db.js';
import { assertBinIsBuilt, start, waitForOutput } from '../cli/cli-harness.js';
import {
  dropTestDatabases,
  openPostgresStore,
  postgres,
  postgresReachable,
  testDatabase,
} from './postgres.fixtures.js';

const general = 'slack:T0ACME:C0GENERAL';
const enc = encodeURIComponent;

/**
 * The studio on Postgres reads what it reads on SQLite: one history, written to a SQLite file
 * and copied to Postgres (`colloquy copy`, which numbers the turns in the same order), then
 * every read of both sources compared.
 */
describe.skipIf(!postgresReachable)(`studio on Postgres (${JSON.stringify(postgres)})`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-studio-pg-'));
  let url = '';
  let sqlite: SqliteStudioSource;
  let source: PostgresStudioSource;

  beforeAll(async () => {
    const path = join(dir, 'studio.db');
    await createStudioDb(path, { runs: true });
    url = await testDatabase();
    const from = new SqliteConversationStore({ path, readonly: true });
    const to = await openPostgresStore(url);
    try {
      await copyFromSqlite(from.db, to.pool);
    } finally {
      await from.close();
      await to.close();
    }
    sqlite = SqliteStudioSource.open(path);
    source = await PostgresStudioSource.open(url);
  });
  afterAll(async () => {
    await sqlite?.close();
    await source?.close();
    await dropTestDatabases();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Both sources' answers to one read. */
  const both = async <T>(read: (s: StudioSource) => Promise<T>): Promise<[T, T]> => [
    await read(sqlite),
    await read(source),
  ];

  it('lists, filters and pages conversations as on SQLite', async () => {
    const [all, onPg] = await both((s) => s.conversations({ limit: 50 }));
    expect(onPg).toEqual(all);
    expect(all.items.length).toBeGreaterThan(4);
    for (const query of [
      { platform: 'slack', limit: 50 },
      { participant: 'discord:80351110224678912', limit: 50 },
      { limit: 2 },
      { limit: 2, after: all.items[1]!.lastMessageAt + '|' + all.items[1]!.id },
    ]) {
      const [expected, actual] = await both((s) => s.conversations(query));
      expect(actual, JSON.stringify(query)).toEqual(expected);
    }
    const [platforms, pgPlatforms] = await both((s) => s.platforms());
    expect(pgPlatforms).toEqual(platforms);
  });

  it('shows every conversation and its turns, with revisions, runs, replies and paging, as on SQLite', async () => {
    const { items } = await sqlite.conversations({ limit: 50 });
    for (const { id } of items) {
      const [detail, pgDetail] = await both((s) => s.conversation(id));
      expect(pgDetail, id).toEqual(detail);
      const [page, pgPage] = await both((s) => s.turns(id, { limit: 100 }));
      expect(pgPage, id).toEqual(page);
    }
    // paging by cursor, and the page around a turn
    let before: string | undefined;
    do {
      const cursor = before;
      const [page, pgPage] = await both((s) =>
        s.turns(general, { limit: 3, ...(cursor ? { before: cursor } : {}) }),
      );
      expect(pgPage).toEqual(page);
      before = page.earlier;
    } while (before !== undefined);
    const middle = (await sqlite.turns(general, { limit: 100 })).turns[4]!;
    const [around, pgAround] = await both((s) =>
      s.turns(general, { limit: 4, around: middle.seq }),
    );
    expect(pgAround).toEqual(around);
    expect(around.turns.map((t) => t.seq)).toContain(middle.seq);
  });

  it('finds the same turns by search, every word plain text', async () => {
    for (const query of [
      'refund',
      'REFUND',
      'invoice march',
      'onerror',
      '"deploy" OR NOT',
      'zebra',
    ]) {
      const [hits, pgHits] = await both((s) => s.search(query, 50));
      const ids = (list: typeof hits) => list.map((hit) => hit.seq).sort((a, b) => a - b);
      expect(ids(pgHits), query).toEqual(ids(hits));
      const bySeq = new Map(hits.map((hit) => [hit.seq, hit]));
      for (const hit of pgHits) expect(hit, query).toEqual(bySeq.get(hit.seq));
    }
    expect((await source.search('refund', 50)).length).toBeGreaterThan(0);
  });

  it('reads runs, a run with its prompt, unanswered turns, aliases, the overview and people as on SQLite', async () => {
    const [runs, pgRuns] = await both((s) => s.runs({ limit: 100 }));
    expect(pgRuns).toEqual(runs);
    expect(runs!.length).toBeGreaterThan(1);
    for (const query of [
      { agent: 'support-agent', limit: 100 },
      { status: 'failed', limit: 100 },
    ]) {
      const [expected, actual] = await both((s) => s.runs(query));
      expect(actual).toEqual(expected);
    }
    for (const run of runs!) {
      const [detail, pgDetail] = await both((s) => s.run(run.id));
      expect(pgDetail, run.id).toEqual(detail);
    }
    for (const read of <((s: StudioSource) => Promise<unknown>)[]>[
      (s: StudioSource) => s.unanswered(50),
      async (s: StudioSource) => (await s.agentAliases('support-agent')).sort(),
      (s: StudioSource) => s.overview(30),
      (s: StudioSource) => s.participants(50, { counts: true }),
    ]) {
      const [expected, actual] = await both(read);
      expect(actual).toEqual(expected);
    }
    for (const { id } of await sqlite.participants(50)) {
      const [person, pgPerson] = await both((s) => s.participant(id));
      expect(pgPerson, id).toEqual(person);
    }
  });

  it('serves the same pages, hostile text escaped', async () => {
    const pages = [
      '/',
      '/?platform=telegram',
      `/c/${enc(general)}`,
      `/c/${enc('telegram:5551002')}`,
      '/runs',
      '/overview',
      '/people',
      `/people/${enc('slack:U0MAL')}`,
    ];
    const render = async (s: StudioSource) => {
      const { app, token } = createStudioApp({ source: s, token: 'pg' });
      const out: string[] = [];
      for (const page of pages) {
        const response = await app.request(page, {
          headers: { cookie: `colloquy_studio=${token}` },
        });
        expect(response.status, page).toBe(200);
        // The live cursor is the one thing each dialect writes its own way.
        out.push((await response.text()).replace(/after=[\w%:-]*/g, 'after=…'));
      }
      return out;
    };
    const [html, pgHtml] = await both(render);
    expect(pgHtml).toEqual(html);
    expect(pgHtml[2]).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(pgHtml[2]).not.toContain('<img src=x');
  });

  it('feeds a live page every turn, one that commits after a later one included', async () => {
    const cursor = await source.liveCursor();
    const writer = await openPostgresStore(url);
    const late = new pg.Client({ connectionString: url });
    await late.connect();
    try {
      // given a turn inserted (a lower seq) by a transaction still open…
      await late.query('BEGIN');
      await late.query(
        `INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, scope,
           channel_type, channel_id, platform_message_id)
         VALUES ('late-turn', $1, 'slack:U0MAL', 'committed late', now(), 'channel', 'slack',
           'C0GENERAL', '1773700000.000000')`,
        [general],
      );
      // …and a later one committed meanwhile
      await writer.append(
        turn(
          general,
          'slack:U0BOB',
          'Bob Chen',
          'committed first',
          '2026-03-17T09:00:00.000Z',
          '1773738000.000000',
        ),
      );
      const early = await source.turnsAfter(cursor, 200, general);
      expect(early.turns).toEqual([]);

      // when the open one commits
      await late.query('COMMIT');

      // then the feed has both, the late one first (it began first), and nothing after them,
      // once every transaction older than theirs has ended: transaction ids are the server's,
      // so one open in another test file's database holds the feed back, and the seed's turns
      // (committed after it began) come through too
      let after = early;
      await expect
        .poll(
          async () => {
            after = await source.turnsAfter(early.cursor, 200, general);
            return after.turns.map((t) => t.content).filter((c) => c.startsWith('committed'));
          },
          { timeout: 30_000 },
        )
        .toEqual(['committed late', 'committed first']);
      expect((await source.turnsAfter(after.cursor, 200, general)).turns).toEqual([]);
      // a cursor it did not make means "now"
      expect((await source.turnsAfter('bogus', 200, general)).turns).toEqual([]);
    } finally {
      await late.end();
      await writer.close();
    }
  });

  it('streams a turn another instance commits to a live transcript, rendered and escaped', async () => {
    const studio = await startStudio({ source, port: 0, token: 'live', pollMs: 50 });
    const writer = await openPostgresStore(url);
    try {
      const page = await fetch(`http://127.0.0.1:${studio.port}/c/${enc(general)}`, {
        headers: { cookie: 'colloquy_studio=live' },
      });
      const events = /data-live="([^"]+)"/.exec(await page.text())![1]!.replace(/&amp;/g, '&');
      const response = await fetch(`http://127.0.0.1:${studio.port}${events}`, {
        headers: { cookie: 'colloquy_studio=live' },
      });
      const reader = response.body!.getReader();
      await writer.append(
        turn(
          general,
          'slack:U0BOB',
          'Bob Chen',
          'live <i>on pg</i>',
          '2026-03-18T09:00:00.000Z',
          '1773824400.000000',
        ),
      );
      const decoder = new TextDecoder();
      let text = '';
      while (!text.includes('live &lt;i&gt;on pg&lt;/i&gt;')) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended: ${text}`);
        text += decoder.decode(value, { stream: true });
      }
      expect(text).toContain('event: turn\n');
      await reader.cancel();
    } finally {
      await writer.close();
      await studio.close();
    }
  });

  it('runs as `colloquy studio --db postgres://…`, the password masked in what it prints', async () => {
    assertBinIsBuilt();
    const withPassword = url.replace('postgres://postgres@', 'postgres://postgres:s3cret-pw@');
    const child = start(['studio', '--db', withPassword, '--port', '0']);
    try {
      let err = '';
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const out = await waitForOutput(child.stdout, '\n');
      const address = /colloquy studio: (http:\/\/127\.0\.0\.1:\d+\/)\?token=([\w-]+)/.exec(out);
      expect(address).not.toBeNull();
      const page = await fetch(address![1]!, {
        headers: { cookie: `colloquy_studio=${address![2]!}` },
      });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain(`href="/c/${enc(general)}"`);
      while (!err.includes('read-only')) await once(child.stderr, 'data');
      expect(err).toContain('postgres:***@');
      expect(out + err).not.toContain('s3cret-pw');
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('forgets a person only when opened with write, as on SQLite', async () => {
    await expect(source.forget('slack:U0MAL')).rejects.toThrow('without --write');
    const writable = await PostgresStudioSource.open(url, { write: true });
    try {
      expect(await writable.forget('slack:U0MAL')).toBeGreaterThan(0);
      expect(await source.participant('slack:U0MAL')).toBeUndefined();
    } finally {
      await writable.close();
    }
  });
});
