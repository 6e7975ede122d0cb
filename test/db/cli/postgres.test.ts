import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { PostgresConversationStore } from 'colloquy/postgres';
import {
  CHANNEL,
  DM,
  alice,
  assertBinIsBuilt,
  colloquy,
  populate,
  populateStore,
  start,
  tempDir,
  turn,
} from './cli-harness.js';
import {
  dropTestDatabases,
  openPostgresStore,
  postgres,
  postgresReachable,
  testDatabase,
} from '../postgres/postgres.fixtures.js';
import { databaseUrl } from '../../postgres.setup.js';
import { stillReadOnly } from '../../../db/cli/commands/sql.js';

// Every command on a postgres:// URL answers as it does on a SQLite file holding the same
// history; `tail --follow` is pushed by LISTEN/NOTIFY and misses no late-committing turn.
describe.skipIf(!postgresReachable)('the colloquy CLI on Postgres', () => {
  const dir = tempDir();
  const file = dir.file('bot.db');
  let url = '';
  let store: PostgresConversationStore;

  beforeAll(async () => {
    assertBinIsBuilt();
    url = await testDatabase();
    store = await openPostgresStore(url);
    await populateStore(store);
    await populate(file);
  });
  afterAll(async () => {
    await store?.close();
    await dropTestDatabases();
    dir.remove();
  });

  /** The same command on the file and on the database: same exit code, same output. */
  async function same(args: string[]) {
    const [onFile, onPostgres] = await Promise.all([
      colloquy([...args, '--db', file]),
      colloquy([...args, '--db', url]),
    ]);
    expect(onPostgres.stderr).toBe(onFile.stderr);
    expect(onPostgres.code).toBe(onFile.code);
    expect(onPostgres.stdout).toBe(onFile.stdout);
    return onPostgres;
  }

  it('tails, lists, exports and queries the same as on SQLite', async () => {
    expect((await same(['tail', '-n', '5'])).stdout.split('\n')).toHaveLength(6);
    await same(['tail', '--conversation', DM]);
    await same(['conversations']);
    await same(['conversations', '--json', '--participant', alice.id]);
    const exported = await same(['export', '--format', 'jsonl', '--no-progress']);
    expect(exported.stdout.trimEnd().split('\n')).toHaveLength(7);
    await same(['sql', '--csv', 'select speaker, text from transcript order by seq']);
    await same(['sql', '--json', 'select count(*) as n from messages']);
  });

  it('searches the same as on SQLite, across conversations and in one', async () => {
    expect((await same(['search', 'order'])).stdout).toContain('where is my order 1235?');
    await same(['search', 'acme', '--limit', '1']);
    await same(['search', 'order ships', '--conversation', DM]);
  }, 60_000);

  it('counts the same in stats, naming the database without its password', async () => {
    const [onFile, onPostgres] = await Promise.all([
      colloquy(['stats', '--json', '--db', file]),
      colloquy(['stats', '--json', '--db', url]),
    ]);
    const { database, ...counts } = JSON.parse(onPostgres.stdout) as Record<string, unknown>;
    const { database: _, ...fileCounts } = JSON.parse(onFile.stdout) as Record<string, unknown>;
    expect(counts).toEqual(fileCounts);
    expect(database).toMatchObject({ path: expect.stringMatching(/^postgres:\/\//) });
  });

  it('reads in a read-only transaction unless --write', async () => {
    const refused = await colloquy([
      'sql',
      "update participants set display_name = 'X'",
      '--db',
      url,
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('colloquy: refusing to write without --write\n');
    const written = await colloquy([
      'sql',
      '--write',
      `update participants set display_name = 'Alice L.' where id = '${alice.id}'`,
      '--db',
      url,
    ]);
    expect(written.stdout).toBe('1 row changed\n');
    await colloquy([
      'sql',
      '--write',
      `update participants set display_name = 'Alice' where id = '${alice.id}'`,
      '--db',
      url,
    ]);
  });

  it('changes nothing without --write, whatever the text says about its transaction', async () => {
    // given the number of turns stored
    const count = ['sql', '--csv', 'select count(*) from messages', '--db', url];
    const before = (await colloquy(count)).stdout;

    // when texts try to switch the transaction to read write or to leave it, then delete
    const attempts = [
      'set transaction read write; delete from messages',
      'commit; delete from messages',
      'end; set transaction read write; delete from messages',
      'rollback; delete from messages',
      "select 'a\\'; commit; delete from messages; --'",
      'set session characteristics as transaction read write; commit; delete from messages',
      'set transaction_read_only = off; delete from messages',
      "select set_config('transaction_read_only', 'off', true); delete from messages",
      'do $$ begin delete from messages; end $$',
      'do $$ begin commit; delete from messages; end $$',
      // Postgres ends a -- comment at a carriage return too
      'select 1;\n-- x\rcommit\nwork;\nset default_transaction_read_only = off;\ndelete from messages;',
      'select 1; -- x\rend; delete from messages',
    ];
    const results = [];
    for (const text of attempts) results.push(await colloquy(['sql', text, '--db', url]));

    // then each is refused, the transaction control by name before anything runs, and every
    // turn is still there
    expect(results.map((result) => result.code)).toEqual(attempts.map(() => 1));
    expect(results.slice(0, 6).map((result) => result.stderr)).toEqual(
      ['set transaction', 'commit', 'end', 'rollback', 'commit', 'set session characteristics'].map(
        (words) =>
          `colloquy: refusing "${words}" without --write: the text runs in one read-only transaction\n`,
      ),
    );
    expect(results[8]!.stderr).toBe('colloquy: refusing to write without --write\n');
    expect(results.slice(10).map((result) => result.stderr)).toEqual(
      ['commit', 'end'].map(
        (words) =>
          `colloquy: refusing "${words}" without --write: the text runs in one read-only transaction\n`,
      ),
    );
    expect((await colloquy(count)).stdout).toBe(before);
  });

  it('stops a read-only run once its transaction ended, whatever ended it', async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`BEGIN READ ONLY; SET LOCAL colloquy.read_only_run = 'r1'; SELECT 1`);
      await expect(stillReadOnly(client, 'r1')).resolves.toBeUndefined();
      await expect(stillReadOnly(client, 'r2')).rejects.toThrow('left its read-only transaction');
      await client.query('COMMIT');
      await expect(stillReadOnly(client, 'r1')).rejects.toThrow('left its read-only transaction');
    } finally {
      await client.end();
    }
  });

  it('reads through dollar-quoted bodies and E strings without --write', async () => {
    const result = await colloquy([
      'sql',
      '--csv',
      "do $body$ begin perform 1; end $body$; select E'it\\'s; fine' as said, count(*) as n from messages",
      '--db',
      url,
    ]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^said,n\n"?it's; fine"?,\d+\n$/);
  });

  it('refuses a database colloquy has not migrated, pointing at migrate, without its password', async () => {
    // given a database with no colloquy tables, reached with a password in the URL
    const server = 'template' in postgres ? postgres.server : '';
    const name = `colloquy_empty_${process.pid}`;
    const admin = new pg.Client({ connectionString: server || undefined });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      const empty = databaseUrl(server, name).replace(
        'postgres://postgres@',
        'postgres://postgres:pw@',
      );
      // when a command reads it
      const { code, stderr } = await colloquy(['conversations', '--db', empty]);
      // then it says what to run, in one line, the password masked
      expect(code).toBe(1);
      expect(stderr).toMatch(
        /^colloquy: \S+ has no current colloquy schema \(an older one, or none yet\); run "colloquy migrate" \(or start the bot\) to bring it up to date\n$/,
      );
      expect(stderr).not.toContain(':pw@');
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('migrates: an up-to-date database says so', async () => {
    const { code, stdout } = await colloquy(['migrate', '--db', url]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^postgres:\/\/\S+ is up to date\n$/);
  });

  it('follows new turns, a late-committing one included', async () => {
    const follower = start(['tail', '--follow', '--conversation', CHANNEL, '-n', '1', '--db', url]);
    let output = '';
    follower.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const until = async (check: () => boolean) => {
      for (let waited = 0; !check(); waited += 20) {
        if (waited > 15_000) throw new Error(`tail printed:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    try {
      await until(() => output.includes('nice'));
      // A turn whose transaction commits after a later turn's: its seq is the smaller one.
      const slow = new pg.Client({ connectionString: url });
      await slow.connect();
      try {
        await slow.query('BEGIN');
        await slow.query(
          `INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, scope,
             channel_type, channel_id) VALUES ('late', $1, $2, 'committed late', now(),
             'channel', 'slack', 'C024BE91L')`,
          [CHANNEL, alice.id],
        );
        await store.append(turn(13, alice, 'committed first', CHANNEL));
        // The follower holds that one back while the older transaction is open: a seq cursor
        // would print it now, move past the late turn's seq and never print the late one.
        await new Promise((resolve) => setTimeout(resolve, 300));
        await slow.query('COMMIT');
      } finally {
        await slow.end();
      }
      await until(() => output.includes('committed first') && output.includes('committed late'));
      expect(output.split('committed first')).toHaveLength(2);
      expect(output.split('committed late')).toHaveLength(2);
    } finally {
      follower.kill('SIGINT');
    }
  });

  it('copies a SQLite history over, once, whatever reads it answering as before', async () => {
    const target = await testDatabase();
    const first = await colloquy(['copy', '--from', file, '--to', target, '--progress']);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^copied 7 messages to postgres:\/\/\S+\n$/);
    expect(first.stderr).toMatch(/copying/);
    const again = await colloquy(['copy', '--from', file, '--to', target, '--no-progress']);
    expect(again.stdout).toMatch(/^copied 0 messages to \S+ \(7 there already\)\n$/);
    for (const args of [
      ['export', '--format', 'jsonl', '--no-progress'],
      ['conversations'],
      ['tail', '-n', '20'],
    ]) {
      const [onFile, copied] = await Promise.all([
        colloquy([...args, '--db', file]),
        colloquy([...args, '--db', target]),
      ]);
      expect(copied.stdout).toBe(onFile.stdout);
    }
  });

  it('imports a dead-letter file into the database, once', async () => {
    const letters = dir.file('letters.jsonl');
    const lost = turn(40, alice, 'kept in the dead letters', CHANNEL);
    writeFileSync(letters, `${JSON.stringify({ op: { kind: 'append', message: lost } })}\n`);
    const first = await colloquy(['import', letters, '--db', url]);
    expect(first.stdout).toMatch(/^postgres:\/\/\S+: 1 written, 0 already stored\n$/);
    const again = await colloquy(['import', letters, '--db', url]);
    expect(again.stdout).toMatch(/: 0 written, 1 already stored\n$/);
    expect((await store.getMessage(CHANNEL, lost.id))?.content).toBe('kept in the dead letters');
  });

  it('forgets a person, with --yes', async () => {
    const { code, stdout } = await colloquy(['forget', alice.id, '--yes', '--db', url]);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^deleted \\d+ messages by ${alice.id}\\n$`));
    expect((await store.get(DM)).map((m) => m.participant.id)).not.toContain(alice.id);
  });
});
