import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { buildIfStale, startConsoleBot } from '../../channels/console/bot.fixtures.js';
import { dropTestDatabases, postgresReachable, testDatabase } from './postgres.fixtures.js';

// `COLLOQUY_DB=postgres://…` for the bot a newcomer starts: it captures into Postgres, and a
// database it cannot reach gets one line, its password masked.
describe.skipIf(!postgresReachable)('the console bot on a postgres:// COLLOQUY_DB', () => {
  let url = '';
  beforeAll(async () => {
    buildIfStale();
    url = await testDatabase();
  });
  afterAll(dropTestDatabases);

  it('captures the conversation into the database', async () => {
    const bot = startConsoleBot({ COLLOQUY_DB: url });
    await bot.say('where is my order?', 1);
    bot.child.stdin.end();
    expect(await bot.exited).toBe(0);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ speaker_kind: string; text: string }>(
        'SELECT speaker_kind, text FROM transcript ORDER BY seq',
      );
      expect(rows.map((row) => row.speaker_kind)).toEqual(['user', 'agent']);
      expect(rows[0]?.text).toBe('where is my order?');
    } finally {
      await client.end();
    }
  });

  it('refuses an unreachable database in one line, never printing its password', async () => {
    const bot = startConsoleBot({ COLLOQUY_DB: 'postgres://bot:s3cret-pw@127.0.0.1:9/colloquy' });
    bot.child.stdin.end();
    expect(await bot.exited).toBe(1);
    expect(bot.stderr()).toMatch(
      /^colloquy: cannot open postgres:\/\/bot:[^\n]*ECONNREFUSED[^\n]*\n$/,
    );
    expect(bot.stderr()).not.toContain('s3cret-pw');
  });
});
