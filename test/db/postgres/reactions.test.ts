import {
  mkdirSync,
  readFileSync,
  readdirSync,
  copyFileSync,
  writeFileSync,
  mkdtempSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewMessage } from 'colloquy';
import { postgresMigrationsFolder, type PostgresConversationStore } from 'colloquy/postgres';
import {
  dropTestDatabases,
  openPostgresStore,
  postgresReachable,
  testDatabase,
} from './postgres.fixtures.js';

const C = 'slack:T1:C1';
const TURN: NewMessage = {
  id: 'm1',
  conversationId: C,
  participant: { kind: 'user', id: 'slack:U1', displayName: 'Alice' },
  content: 'deploy done',
  timestamp: '2026-01-01T00:00:00.000Z',
  scope: 'channel',
  metadata: { channelType: 'slack', channelId: 'C1', messageId: '1.000100', mentions: [] },
};
const change = (reaction: string) => ({
  channelType: 'slack',
  channelId: 'C1',
  messageId: '1.000100',
  participantId: 'slack:U2',
  reaction,
  at: '2026-01-01T00:01:00.000Z',
});

/** Each reaction recorded more than once, with how many times. */
async function doubled(store: PostgresConversationStore): Promise<string[]> {
  const counts = new Map<string, number>();
  for (const r of await store.getReactions(C, 'm1')) {
    counts.set(r.reaction, (counts.get(r.reaction) ?? 0) + 1);
  }
  return [...counts].filter(([, n]) => n > 1).map(([reaction, n]) => `${reaction}×${n}`);
}

describe.runIf(postgresReachable)('reactions on Postgres', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'colloquy-pg-reactions-'));
  });
  afterAll(async () => {
    await dropTestDatabases();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps one open row when two instances record the same reaction at once', async () => {
    // Given two instances on one database and a turn
    const url = await testDatabase();
    const a = await openPostgresStore(url);
    const b = await openPostgresStore(url);
    try {
      await a.append(TURN);
      // When both record each of 30 reactions at the same time (a platform's redelivery)
      for (let i = 0; i < 30; i++) {
        const both = await Promise.all([
          a.recordReaction(change(`r${i}`)),
          b.recordReaction(change(`r${i}`)),
        ]);
        expect(both).toEqual([true, true]);
      }
      // Then each is there once
      expect(await a.getReactions(C, 'm1')).toHaveLength(30);
      expect(await doubled(a)).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('keeps the oldest of the open rows a database already holds twice when it migrates', async () => {
    // Given a database migrated up to the unique key on open reactions, holding a reaction twice
    const url = await testDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
      await migrate(drizzle(client), {
        migrationsFolder: migrationsBefore(dir, '_open_reactions_unique'),
        migrationsTable: '__drizzle_migrations',
        migrationsSchema: 'public',
      });
      const at = '2026-01-01T00:00:00.000Z';
      await client.query(
        `INSERT INTO participants (id, kind, first_seen_at, last_seen_at) VALUES ('slack:U1', 'user', $1, $1);
         INSERT INTO conversations (id, channel_type, channel_id, scope, created_at, last_message_at)
           VALUES ('${C}', 'slack', 'C1', 'channel', $1, $1);
         INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, scope,
             channel_type, channel_id, platform_message_id)
           VALUES ('m1', '${C}', 'slack:U1', 'deploy done', $1, 'channel', 'slack', 'C1', '1.000100')`.replace(
          /\$1/g,
          `'${at}'`,
        ),
      );
      const reaction = (who: string, emoji: string, added: string, removed: string | null) =>
        client.query(
          `INSERT INTO message_reactions (message_seq, message_id, participant_id, reaction, added_at, removed_at)
            SELECT seq, id, $1, $2, $3, $4 FROM messages WHERE id = 'm1'`,
          [who, emoji, added, removed],
        );
      await reaction('slack:U2', 'eyes', '2026-01-01T00:00:02.000Z', null);
      await reaction('slack:U2', 'eyes', '2026-01-01T00:00:01.000Z', null);
      await reaction('slack:U2', 'eyes', '2026-01-01T00:00:03.000Z', null);
      await reaction('slack:U2', 'eyes', '2026-01-01T00:00:00.500Z', '2026-01-01T00:00:00.700Z');
      await reaction('slack:U3', 'eyes', '2026-01-01T00:00:04.000Z', null);
    } finally {
      await client.end();
    }
    // When colloquy opens it
    const store = await openPostgresStore(url);
    try {
      // Then the oldest open row of each person's reaction is kept, and the closed one
      const kept = [
        {
          participantId: 'slack:U2',
          reaction: 'eyes',
          addedAt: '2026-01-01T00:00:00.500Z',
          removedAt: '2026-01-01T00:00:00.700Z',
        },
        { participantId: 'slack:U2', reaction: 'eyes', addedAt: '2026-01-01T00:00:01.000Z' },
        { participantId: 'slack:U3', reaction: 'eyes', addedAt: '2026-01-01T00:00:04.000Z' },
      ];
      expect(await store.getReactions(C, 'm1')).toEqual(kept);
      // And the same reaction recorded again stays one open row
      expect(await store.recordReaction(change('eyes'))).toBe(true);
      expect(await store.getReactions(C, 'm1')).toEqual(kept);
    } finally {
      await store.close();
    }
  });
});

/** A copy of the migrations folder whose journal ends before the migration tagged `tag`. */
function migrationsBefore(dir: string, tag: string): string {
  const folder = postgresMigrationsFolder();
  const journal = JSON.parse(readFileSync(join(folder, 'meta/_journal.json'), 'utf8')) as {
    entries: { tag: string }[];
  };
  const at = journal.entries.findIndex((entry) => entry.tag.endsWith(tag));
  expect(at).toBeGreaterThan(0);
  const old = join(dir, 'migrations');
  mkdirSync(join(old, 'meta'), { recursive: true });
  for (const file of readdirSync(folder)) {
    if (file.endsWith('.sql')) copyFileSync(join(folder, file), join(old, file));
  }
  const entries = journal.entries.slice(0, at);
  writeFileSync(join(old, 'meta/_journal.json'), JSON.stringify({ ...journal, entries }));
  return old;
}
