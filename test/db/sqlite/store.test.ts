import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import {
  SqliteConversationStore,
  type SqliteStoreOptions,
  migrationsFolder,
} from 'colloquy/sqlite';
import { StoreError } from 'colloquy';
import { parseSlackEvent } from 'colloquy/slack';
import { normalizeTimestamp } from '../../../db/rows.js';
import type { NewMessage } from 'colloquy';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const C1 = 'slack:T1:C1';

let dir: string;
let open: SqliteConversationStore[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'colloquy-sqlite-'));
  open = [];
});
afterEach(async () => {
  for (const store of open) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function storeAt(path = join(dir, 'colloquy.db'), options: Partial<SqliteStoreOptions> = {}) {
  const store = new SqliteConversationStore({ path, ...options });
  open.push(store);
  return store;
}

let n = 0;
function turn(fields: Partial<NewMessage> & { messageId?: string; mentions?: string[] } = {}) {
  n++;
  const { messageId, mentions, ...rest } = fields;
  const message: NewMessage = {
    id: `m-${n}`,
    conversationId: C1,
    participant: { kind: 'user', id: 'slack:U1', displayName: 'Alice' },
    content: `turn ${n}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    scope: 'channel',
    metadata: {
      channelType: 'slack',
      channelId: 'C1',
      messageId: messageId ?? `p-${n}`,
      mentions: mentions ?? [],
    },
    ...rest,
  };
  return message;
}

/** A Slack message of `user` mentioning the bot, as the Slack channel parses it. */
function slackMention(user: string, text: string, ts: string): NewMessage {
  const parsed = parseSlackEvent(
    {
      team_id: 'T1',
      event_id: `Ev${ts}`,
      event: { type: 'message', channel: 'C1', channel_type: 'channel', user, text, ts },
    },
    { self: { userId: 'UBOT', botId: 'BBOT' }, names: new Map([['UBOT', 'bot']]) },
  );
  if (parsed.kind !== 'message') throw new Error(`not a message: ${parsed.kind}`);
  return parsed.message;
}

/** Commits `answered` and the run of agent `support` that answered it, its prompt recorded. */
async function recordRun(store: SqliteConversationStore, answered: NewMessage, prompt: string) {
  const results = await store.commit([
    { kind: 'append', message: answered },
    {
      kind: 'run',
      create: true,
      run: {
        id: `${answered.id}:support`,
        messageId: answered.id,
        conversationId: answered.conversationId,
        agentId: 'support',
        status: 'answered',
        createdAt: answered.timestamp,
        attempts: 1,
        prompt: JSON.stringify([{ role: 'user', content: prompt }]),
      },
    },
  ]);
  expect(results.every((result) => result.ok)).toBe(true);
}

async function rejection(promise: Promise<unknown>): Promise<StoreError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

function openError(fn: () => unknown): StoreError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(StoreError);
    return error as StoreError;
  }
  throw new Error('expected a StoreError');
}

describe('SqliteConversationStore: opening a file', () => {
  it('sets WAL, synchronous=FULL, secure delete, foreign keys, a 5 s busy timeout and temp_store=MEMORY', () => {
    const store = storeAt();
    expect(store.db.pragma('temp_store', { simple: true })).toBe(2);
    expect(store.db.pragma('secure_delete', { simple: true })).toBe(1);
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    // FULL: the WAL is synced at every commit, so an acknowledged turn survives a power loss.
    expect(store.db.pragma('synchronous', { simple: true })).toBe(2);
    expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(store.db.pragma('busy_timeout', { simple: true })).toBe(5000);
  });

  it('refuses a durability it does not know, naming the two it takes', () => {
    const error = openError(() =>
      storeAt(join(dir, 'odd.db'), { durability: 'FULL' as unknown as 'full' }),
    );
    expect(error.message).toBe(`durability must be 'full' or 'normal', not "FULL"`);
    expect(existsSync(join(dir, 'odd.db'))).toBe(false);
  });

  it("sets synchronous=NORMAL with durability: 'normal', and still writes and reads", async () => {
    const store = storeAt(join(dir, 'normal.db'), { durability: 'normal' });
    expect(store.db.pragma('synchronous', { simple: true })).toBe(1);
    const written = turn();
    await store.append(written);
    expect((await store.get(written.conversationId)).map((m) => m.id)).toEqual([written.id]);
  });

  it('migrates a file written with only the first migration, keeping its rows', async () => {
    // given a database at migration 0000 with a conversation, a mention and a message
    const path = join(dir, 'old.db');
    const oldMigrations = join(dir, 'migrations-0000');
    mkdirSync(join(oldMigrations, 'meta'), { recursive: true });
    copyFileSync(join(migrationsFolder(), '0000_init.sql'), join(oldMigrations, '0000_init.sql'));
    const journal = JSON.parse(
      (await import('node:fs')).readFileSync(
        join(migrationsFolder(), 'meta/_journal.json'),
        'utf8',
      ),
    ) as { entries: unknown[] };
    writeFileSync(
      join(oldMigrations, 'meta/_journal.json'),
      JSON.stringify({ ...journal, entries: journal.entries.slice(0, 1) }),
    );
    const old = new Database(path);
    migrate(drizzle(old), { migrationsFolder: oldMigrations });
    old.exec(`
      INSERT INTO conversations VALUES ('${C1}', 'slack', 'C1', 'general', NULL, 'channel',
        '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 1);
      INSERT INTO participants VALUES ('slack:U1', 'user', 'Alice', '2026-01-01T00:00:00.000Z',
        '2026-01-01T00:00:00.000Z');
      INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, scope,
        channel_type, channel_id, platform_message_id)
      VALUES ('old-1', '${C1}', 'slack:U1', 'the legacy invoice <@UBOT>', '2026-01-01T00:00:00.000Z',
        'channel', 'slack', 'C1', '1.0');
      INSERT INTO message_mentions VALUES (1, '${C1}', 'slack:UBOT');`);
    old.close();

    // when the store opens it
    const store = storeAt(path);

    // then the rows survive, search finds them and the addressed-only query sees the mention
    expect((await store.get(C1)).map((m) => m.content)).toEqual(['the legacy invoice <@UBOT>']);
    expect((await store.search(C1, 'invoice')).map((m) => m.id)).toEqual(['old-1']);
    const concerning = await store.get(C1, { concerning: { aliases: ['slack:UBOT'] } });
    expect(concerning.map((m) => m.id)).toEqual(['old-1']);
  });

  it('migrates a file searched by conversation token (0002), rebuilding its search index', async () => {
    // given a database at migration 0002 with turns in two conversations, one of them edited
    const path = join(dir, 'v2.db');
    const old = new Database(path);
    migrate(drizzle(old), { migrationsFolder: await migrationsUpTo(dir, 3) });
    old.exec(`
      INSERT INTO participants VALUES ('slack:U1', 'user', 'Alice', '2026-01-01', '2026-01-01');
      INSERT INTO conversations VALUES ('${C1}', 'slack', 'C1', NULL, NULL, 'channel',
        '2026-01-01', '2026-01-01', 2), ('slack:T1:C2', 'slack', 'C2', NULL, NULL, 'channel',
        '2026-01-01', '2026-01-01', 1);
      INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, scope,
        channel_type, channel_id)
      VALUES ('a', '${C1}', 'slack:U1', 'refund please', '2026-01-01T00:00:01.000Z', 'channel',
        'slack', 'C1'),
      ('b', 'slack:T1:C2', 'slack:U1', 'refund elsewhere', '2026-01-01T00:00:02.000Z',
        'channel', 'slack', 'C2'),
      ('c', '${C1}', 'slack:U1', 'draft', '2026-01-01T00:00:03.000Z', 'channel', 'slack', 'C1');
      UPDATE messages SET content = 'refund again' WHERE id = 'c';`);
    old.close();

    // when the store opens it
    const store = storeAt(path);

    // then each conversation finds only its own turns, new turns are found too, and the
    // index is consistent
    expect((await store.search(C1, 'refund')).map((m) => m.id)).toEqual(['c', 'a']);
    expect((await store.search('slack:T1:C2', 'refund')).map((m) => m.id)).toEqual(['b']);
    await store.append(turn({ content: 'refund three' }));
    expect(await store.search(C1, 'refund')).toHaveLength(3);
    store.db.exec(`INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')`);
  });

  it('migrates a file with an AUTOINCREMENT seq (0011), keeping rows, mentions, revisions and seq', async () => {
    // given a database at migration 0011 whose newest turn was deleted
    const path = join(dir, 'v11.db');
    const old = new Database(path);
    old.pragma('foreign_keys = ON');
    migrate(drizzle(old), { migrationsFolder: await migrationsUpTo(dir, 12) });
    old.exec(`
      INSERT INTO participants VALUES ('slack:U1', 'user', 'Alice', '2026-01-01', '2026-01-01');
      INSERT INTO conversations (id, channel_type, channel_id, scope, created_at, last_message_at,
        message_count) VALUES ('${C1}', 'slack', 'C1', 'channel', '2026-01-01', '2026-01-01', 3);
      INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, scope,
        channel_type, channel_id, platform_message_id)
      VALUES ('a', '${C1}', 'slack:U1', 'refund please <@UBOT>', '2026-01-01T00:00:01.000Z',
        'channel', 'slack', 'C1', '1.0'),
      ('b', '${C1}', 'slack:U1', 'draft', '2026-01-01T00:00:02.000Z', 'channel', 'slack', 'C1',
        '2.0'),
      ('c', '${C1}', 'slack:U1', 'gone soon', '2026-01-01T00:00:03.000Z', 'channel', 'slack',
        'C1', '3.0');
      INSERT INTO message_mentions VALUES (1, '${C1}', 'slack:UBOT', '2026-01-01T00:00:01.000Z');
      INSERT INTO message_revisions (message_seq, content, replaced_at)
        VALUES (2, 'first draft', '2026-01-01T00:00:05.000Z');
      DELETE FROM messages WHERE id = 'c';`);
    old.close();

    // when the store opens it and a turn is appended
    const store = storeAt(path);
    await store.append(turn({ id: 'd', content: 'refund again', messageId: '4.0' }));

    // then the rows keep their seq, mentions and revisions; the new turn is numbered past the
    // deleted one; search and the addressed-only query work; nothing points at nothing
    const seqs = store.db.prepare('SELECT id, seq FROM messages ORDER BY seq').all();
    expect(seqs).toEqual([
      { id: 'a', seq: 1 },
      { id: 'b', seq: 2 },
      { id: 'd', seq: 4 },
    ]);
    expect(store.db.prepare('SELECT count(*) AS n FROM message_revisions').get()).toEqual({ n: 1 });
    const concerning = await store.get(C1, { concerning: { aliases: ['slack:UBOT'] } });
    expect(concerning.map((m) => m.id)).toEqual(['a']);
    expect((await store.search(C1, 'refund')).map((m) => m.id)).toEqual(['d', 'a']);
    expect(store.db.pragma('foreign_key_check')).toEqual([]);
    expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
    store.db.exec(`INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')`);
    expect(store.db.prepare('SELECT count(*) AS n FROM transcript').get()).toEqual({ n: 3 });
  });

  it('migrates a file numbering seq past a kept floor (0023) to an AUTOINCREMENT seq', async () => {
    // given a database at migration 0023 whose two newest turns were deleted, with a mention,
    // a reaction and a revision on the turns that stay
    const path = join(dir, 'v23.db');
    const old = new Database(path);
    old.pragma('foreign_keys = ON');
    migrate(drizzle(old), { migrationsFolder: await migrationsUpTo(dir, 24) });
    old.exec(`
      INSERT INTO participants (id, kind, display_name, first_seen_at, last_seen_at)
        VALUES ('slack:U1', 'user', 'Alice', '2026-01-01', '2026-01-01');
      INSERT INTO conversations (id, channel_type, channel_id, scope, created_at, last_message_at,
        message_count) VALUES ('${C1}', 'slack', 'C1', 'channel', '2026-01-01', '2026-01-01', 0);
      INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, scope,
        channel_type, channel_id, platform_message_id)
      VALUES ('a', '${C1}', 'slack:U1', 'refund please <@UBOT>', '2026-01-01T00:00:01.000Z',
        'channel', 'slack', 'C1', '1.0'),
      ('b', '${C1}', 'slack:U1', 'draft', '2026-01-01T00:00:02.000Z', 'channel', 'slack', 'C1',
        '2.0'),
      ('c', '${C1}', 'slack:U1', 'gone soon', '2026-01-01T00:00:03.000Z', 'channel', 'slack',
        'C1', '3.0'),
      ('d', '${C1}', 'slack:U1', 'gone first', '2026-01-01T00:00:04.000Z', 'channel', 'slack',
        'C1', '4.0');
      INSERT INTO message_mentions VALUES (1, '${C1}', 'slack:UBOT', '2026-01-01T00:00:01.000Z');
      INSERT INTO message_reactions (message_seq, message_id, participant_id, reaction, added_at)
        VALUES (1, 'a', 'slack:U1', 'thumbsup', '2026-01-01T00:00:06.000Z');
      INSERT INTO message_revisions (message_seq, content, replaced_at)
        VALUES (2, 'first draft', '2026-01-01T00:00:05.000Z');
      DELETE FROM messages WHERE id = 'd';
      DELETE FROM messages WHERE id = 'c';`);
    old.close();

    // when the store opens it, a turn is appended, deleted as the newest, and another appended
    const store = storeAt(path);
    await store.append(turn({ id: 'e', content: 'refund again', messageId: '5.0' }));
    await store.deleteMessages(C1, ['e']);
    await store.append(turn({ id: 'f', content: 'refund once more', messageId: '6.0' }));

    // then the rows keep their seq, mentions, reactions and revisions; each new turn is
    // numbered past every seq ever given; SQLite keeps that number, no trigger or state key
    const seqs = store.db.prepare('SELECT id, seq FROM messages ORDER BY seq').all();
    expect(seqs).toEqual([
      { id: 'a', seq: 1 },
      { id: 'b', seq: 2 },
      { id: 'f', seq: 6 },
    ]);
    const count = (sql: string) => (store.db.prepare(sql).get() as { n: number }).n;
    expect(count('SELECT count(*) AS n FROM message_mentions')).toBe(1);
    expect(count('SELECT count(*) AS n FROM message_reactions')).toBe(1);
    expect(count('SELECT count(*) AS n FROM message_revisions')).toBe(1);
    const table = store.db
      .prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'messages'`)
      .pluck()
      .get() as string;
    expect(table).toMatch(/`seq` integer PRIMARY KEY AUTOINCREMENT/);
    expect(count(`SELECT count(*) AS n FROM sqlite_master WHERE sql LIKE '%seq_floor%'`)).toBe(0);
    expect(count(`SELECT count(*) AS n FROM colloquy_state WHERE key LIKE '%seq_floor%'`)).toBe(0);
    const concerning = await store.get(C1, { concerning: { aliases: ['slack:UBOT'] } });
    expect(concerning.map((m) => m.id)).toEqual(['a']);
    expect((await store.search(C1, 'refund')).map((m) => m.id)).toEqual(['f', 'a']);
    expect(count('SELECT message_count AS n FROM conversations')).toBe(3);
    expect(count('SELECT count(*) AS n FROM transcript')).toBe(3);
    expect(store.db.pragma('foreign_key_check')).toEqual([]);
    store.db.exec(`INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')`);
  });

  it('migrates a file holding an open reaction twice to one row, the oldest', async () => {
    // given a database before the unique key on open reactions, holding a person's reaction
    // open three times and once closed
    const path = join(dir, 'v25.db');
    const old = new Database(path);
    migrate(drizzle(old), { migrationsFolder: await migrationsUpTo(dir, 26) });
    old.exec(`
      INSERT INTO participants (id, kind, display_name, first_seen_at, last_seen_at)
        VALUES ('slack:U1', 'user', 'Alice', '2026-01-01', '2026-01-01');
      INSERT INTO conversations (id, channel_type, channel_id, scope, created_at, last_message_at,
        message_count) VALUES ('${C1}', 'slack', 'C1', 'channel', '2026-01-01', '2026-01-01', 1);
      INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, scope,
        channel_type, channel_id, platform_message_id)
      VALUES ('a', '${C1}', 'slack:U1', 'deploy done', '2026-01-01T00:00:01.000Z',
        'channel', 'slack', 'C1', '1.0');
      INSERT INTO message_reactions (message_seq, message_id, participant_id, reaction, added_at,
        removed_at) VALUES
        (1, 'a', 'slack:U2', 'eyes', '2026-01-01T00:00:03.000Z', NULL),
        (1, 'a', 'slack:U2', 'eyes', '2026-01-01T00:00:02.000Z', NULL),
        (1, 'a', 'slack:U2', 'eyes', '2026-01-01T00:00:04.000Z', NULL),
        (1, 'a', 'slack:U2', 'eyes', '2026-01-01T00:00:01.000Z', '2026-01-01T00:00:01.500Z'),
        (1, 'a', 'slack:U3', 'eyes', '2026-01-01T00:00:05.000Z', NULL);`);
    old.close();

    // when the store opens it and the reaction is recorded once more
    const store = storeAt(path);
    await store.recordReaction({
      channelType: 'slack',
      channelId: 'C1',
      messageId: '1.0',
      participantId: 'slack:U2',
      reaction: 'eyes',
      at: '2026-01-01T00:00:06.000Z',
    });

    // then each person's reaction is open once, from its oldest row, the closed one kept
    expect(await store.getReactions(C1, 'a')).toEqual([
      {
        participantId: 'slack:U2',
        reaction: 'eyes',
        addedAt: '2026-01-01T00:00:01.000Z',
        removedAt: '2026-01-01T00:00:01.500Z',
      },
      { participantId: 'slack:U2', reaction: 'eyes', addedAt: '2026-01-01T00:00:02.000Z' },
      { participantId: 'slack:U3', reaction: 'eyes', addedAt: '2026-01-01T00:00:05.000Z' },
    ]);
  });

  it('migrates a file with an index entry per author and turn (0014) to the agents’ partial index', async () => {
    // given a database at migration 0014 with a person's and an agent's turns
    const path = join(dir, 'v14.db');
    const old = new Database(path);
    migrate(drizzle(old), { migrationsFolder: await migrationsUpTo(dir, 15) });
    old.exec(`
      INSERT INTO participant_rows VALUES ('slack:U1', 'user', 'Alice', '2026-01-01', '2026-01-01'),
        ('support-agent', 'agent', 'Support', '2026-01-01', '2026-01-01');
      INSERT INTO conversation_rows (id, channel_type, channel_id, scope, created_at,
        last_message_at) VALUES ('${C1}', 'slack', 'C1', 'channel', '2026-01-01', '2026-01-01'),
        ('slack:T1:C2', 'slack', 'C2', 'channel', '2026-01-01', '2026-01-01');
      INSERT INTO messages (seq, id, conversation_id, participant_id, content, timestamp, scope,
        channel_type, channel_id, platform_message_id)
      VALUES (1, 'a', '${C1}', 'slack:U1', 'hello', '2026-01-01T00:00:01.000Z', 'channel',
        'slack', 'C1', '1.0'),
      (2, 'b', '${C1}', 'support-agent', 'hi', '2026-01-01T00:00:02.000Z', 'channel', 'slack',
        'C1', '2.0'),
      (3, 'c', 'slack:T1:C2', 'slack:U1', 'there', '2026-01-01T00:00:03.000Z', 'channel',
        'slack', 'C2', '3.0');`);
    old.close();

    // when the store opens it
    const store = storeAt(path);

    // then each turn carries its author's kind, only the agent's is in the partial index, and
    // who wrote where is known
    const kinds = store.db.prepare('SELECT id, author_kind FROM messages ORDER BY seq').all();
    expect(kinds).toEqual([
      { id: 'a', author_kind: 'user' },
      { id: 'b', author_kind: 'agent' },
      { id: 'c', author_kind: 'user' },
    ]);
    const indexed = store.db
      .prepare(
        "SELECT seq FROM messages INDEXED BY messages_conversation_author_idx WHERE conversation_id = ? AND participant_id = ? AND author_kind <> 'user'",
      )
      .pluck()
      .all(C1, 'support-agent');
    expect(indexed).toEqual([2]);
    const pairs = store.db.prepare('SELECT * FROM conversation_authors ORDER BY 1, 2').raw().all();
    expect(pairs).toEqual([
      [C1, 'slack:U1', 'user'],
      [C1, 'support-agent', 'agent'],
      ['slack:T1:C2', 'slack:U1', 'user'],
    ]);
    const names = store.db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'index'`).pluck();
    expect(names.all()).not.toContain('messages_conversation_participant_idx');
    const concerning = await store.get(C1, { concerning: { aliases: ['support-agent'] } });
    expect(concerning.map((m) => m.id)).toEqual(['b']);
    const alices = await store.listConversations({ participantId: 'slack:U1' });
    expect(alices.items.map((c) => c.id).sort()).toEqual([C1, 'slack:T1:C2']);
  });

  it('migrates a file folding the tallies (0015) to tallies kept per turn', async () => {
    // given a database at migration 0015 with 300 turns, the first 256 folded in
    const path = join(dir, 'v15.db');
    const old = new Database(path);
    migrate(drizzle(old), { migrationsFolder: await migrationsUpTo(dir, 16) });
    old.exec(ALICE_IN_C1);
    const insert = old.prepare(`INSERT INTO messages (id, conversation_id, participant_id,
        content, timestamp, scope, channel_type, channel_id, platform_message_id)
      VALUES (?, '${C1}', 'slack:U1', 'hi', ?, 'channel', 'slack', 'C1', ?)`);
    for (let i = 1; i <= 300; i++) {
      insert.run(`m${i}`, new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), String(i));
    }
    const state = old.prepare(`SELECT value FROM colloquy_state WHERE key = ?`).pluck();
    expect(state.get('messages_folded_seq')).toBe('256');
    old.close();

    // when the store opens it and more turns come
    const store = storeAt(path);
    for (let i = 301; i <= 600; i++) {
      const timestamp = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
      await store.append(turn({ id: `m${i}`, messageId: String(i), timestamp }));
    }

    // then no fold is left and the tables read what the turns say
    const folds = store.db
      .prepare(`SELECT name FROM sqlite_schema WHERE name LIKE '%fold%'`)
      .pluck()
      .all();
    expect(folds).toEqual([]);
    const seen = store.db
      .prepare(`SELECT first_seen_at, last_seen_at FROM participants WHERE id = 'slack:U1'`)
      .get();
    expect(seen).toEqual({
      first_seen_at: '2026-01-01T00:00:00.000Z',
      last_seen_at: '2026-01-01T00:10:00.000Z',
    });
    expect((await store.getConversation(C1))?.messageCount).toBe(600);
  });

  it('migrates a file without the message_search view (0016), which then finds its turns by their words', async () => {
    // given a database at migration 0016 with two turns written before the view existed
    const path = join(dir, 'v16.db');
    const old = new Database(path);
    migrate(drizzle(old), { migrationsFolder: await migrationsUpTo(dir, 17) });
    old.exec(ALICE_IN_C1);
    old.exec(`
      INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, scope,
        channel_type, channel_id, platform_message_id)
      VALUES ('m1', '${C1}', 'slack:U1', 'where is my refund?', '2026-01-01T00:00:01.000Z',
          'channel', 'slack', 'C1', '1'),
        ('m2', '${C1}', 'slack:U1', 'hello there', '2026-01-01T00:00:02.000Z',
          'channel', 'slack', 'C1', '2');`);
    expect(old.prepare(`SELECT name FROM sqlite_schema WHERE name = 'message_search'`).get()).toBe(
      undefined,
    );
    old.close();

    // when the store opens it and a turn with the same word comes
    const store = storeAt(path);
    await store.append(turn({ content: 'the refund, the refund policy' }));

    // then one plain query gives the matching turns with their text and speaker, best first
    const found = store.db
      .prepare(
        `SELECT speaker, text FROM message_search WHERE message_search MATCH 'refund' ORDER BY rank`,
      )
      .all();
    expect(found).toEqual([
      { speaker: 'Alice', text: 'the refund, the refund policy' },
      { speaker: 'Alice', text: 'where is my refund?' },
    ]);
  });

  it('keeps the kind each turn was written as, and who wrote where as what', async () => {
    // given Alice writing as a person in two conversations, then as an agent in one
    const store = storeAt(join(dir, 'kinds.db'));
    const alice = { kind: 'user' as const, id: 'slack:U1', displayName: 'Alice' };
    await store.append(turn({ participant: alice }));
    await store.append(turn({ participant: alice, conversationId: 'slack:T1:C2' }));
    await store.append(turn({ participant: { ...alice, kind: 'agent' } }));

    // then each turn keeps the kind it was written as, her latest kind is an agent's, and
    // conversation_authors has one row per conversation and kind
    const kinds = store.db.prepare('SELECT author_kind FROM messages ORDER BY seq').pluck();
    expect(kinds.all()).toEqual(['user', 'user', 'agent']);
    expect((await store.get(C1)).map((m) => m.participant.kind)).toEqual(['agent', 'agent']);
    const pairs = store.db
      .prepare('SELECT conversation_id, author_kind FROM conversation_authors ORDER BY 1, 2')
      .raw();
    expect(pairs.all()).toEqual([
      [C1, 'agent'],
      [C1, 'user'],
      ['slack:T1:C2', 'user'],
    ]);

    // and a conversation deleted, or a participant forgotten, leaves no row behind
    await store.deleteConversation('slack:T1:C2');
    expect(pairs.all()).toEqual([
      [C1, 'agent'],
      [C1, 'user'],
    ]);
    await store.forgetParticipant(alice.id);
    expect(pairs.all()).toEqual([]);
  });

  it('leaves an author’s earlier turns as written when their kind changes', async () => {
    // given a person's turns, then one of theirs written as an agent
    const store = storeAt(join(dir, 'flip.db'));
    const bob = { kind: 'user' as const, id: 'slack:U2', displayName: 'Bob' };
    for (let i = 0; i < 20; i++) await store.append(turn({ participant: bob }));
    const before = store.db.prepare('SELECT seq, author_kind FROM messages').all();
    await store.append(turn({ participant: { ...bob, kind: 'agent' } }));

    // then the earlier turns are as they were (no rewrite of everything they ever wrote)
    const after = store.db.prepare('SELECT seq, author_kind FROM messages').all();
    expect(after.slice(0, 20)).toEqual(before);
    expect(after.at(-1)).toMatchObject({ author_kind: 'agent' });
  });

  it('never numbers a turn with the seq of a deleted one', async () => {
    // given three turns, the newest deleted through the store and a whole conversation too
    const store = storeAt(join(dir, 'seq.db'));
    for (const id of ['a', 'b', 'c']) await store.append(turn({ id, messageId: id }));
    await store.deleteMessages(C1, ['c']);
    await store.append(turn({ id: 'd', messageId: 'd' }));
    await store.append({ ...turn({ id: 'x', messageId: 'x' }), conversationId: 'slack:T1:C9' });
    await store.deleteConversation('slack:T1:C9');

    // when more turns are appended
    await store.append(turn({ id: 'e', messageId: 'e' }));

    // then each took a seq no turn had before, and the deleted conversation took its turns
    const rows = store.db.prepare('SELECT id, seq FROM messages ORDER BY seq').all();
    expect(rows).toEqual([
      { id: 'a', seq: 1 },
      { id: 'b', seq: 2 },
      { id: 'd', seq: 4 },
      { id: 'e', seq: 6 },
    ]);
  });

  it('refuses a file written by a newer colloquy', async () => {
    const path = join(dir, 'newer.db');
    await storeAt(path).close();
    const db = new Database(path);
    db.prepare(`INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', ?)`).run(
      Date.now() + 10 * 365 * 86_400_000,
    );
    db.close();
    const error = openError(() => new SqliteConversationStore({ path }));
    expect(error.message).toMatch(/was written by a newer version of colloquy/);
  });

  it('explains a path whose directory does not exist', () => {
    const path = join(dir, 'missing', 'colloquy.db');
    const error = openError(() => new SqliteConversationStore({ path }));
    expect(error.message).toContain(path);
    expect(error.message).toMatch(/does not exist/);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('explains a file that is not a SQLite database', () => {
    const path = join(dir, 'notes.db');
    writeFileSync(path, 'these are my notes, not a database\n'.repeat(200));
    const error = openError(() => new SqliteConversationStore({ path }));
    expect(error.message).toMatch(/is not a SQLite database/);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it("refuses another application's SQLite file and leaves it as it was", () => {
    const path = join(dir, 'other-app.db');
    const other = new Database(path);
    other.exec(
      "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'x')",
    );
    other.close();
    const before = readFileSync(path);

    for (const readonly of [false, true]) {
      const error = openError(() => new SqliteConversationStore({ path, readonly }));
      expect(error.message).toBe(
        `${path} is not a colloquy database (it holds another application's tables: notes); point COLLOQUY_DB at a new file`,
      );
    }
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('opens read-only: reads work, writes fail with a StoreError', async () => {
    const path = join(dir, 'ro.db');
    const writer = storeAt(path);
    await writer.append(turn());
    const reader = new SqliteConversationStore({ path, readonly: true });
    open.push(reader);
    expect(await reader.get(C1)).toHaveLength(1);
    const error = await rejection(reader.append(turn()));
    expect(error.message).toMatch(/read-only/);
    expect(error.conversationId).toBe(C1);
  });
});

describe('SqliteConversationStore: several writers', () => {
  it('stores every turn once when three processes append to one file at the same time', async () => {
    // given a fresh file and three child processes, each appending 150 turns through the store
    const path = join(dir, 'shared.db');
    const writer = join(import.meta.dirname, '../../fixtures/sqlite-writer.ts');
    const children = ['1', '2', '3'].map((id) =>
      run(process.execPath, ['--import', 'tsx', writer, path, id, '150'], { timeout: 80_000 }),
    );

    // when they all finish
    await Promise.all(children);

    // then nothing was lost or doubled, and the counters agree with the rows
    const store = storeAt(path);
    const all = await store.get('telegram:shared', { limit: 10_000 });
    expect(all).toHaveLength(3 * 150 + 1);
    expect(new Set(all.map((m) => m.sequence)).size).toBe(all.length);
    expect(all.filter((m) => m.metadata.messageId === 'common')).toHaveLength(1);
    expect((await store.getConversation('telegram:shared'))?.messageCount).toBe(451);
  }, 90_000);

  it('reports a locked database as a StoreError, then recovers', async () => {
    // given another connection holding the write lock
    const path = join(dir, 'locked.db');
    const store = storeAt(path, { busyTimeoutMs: 50 });
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');

    // when the store appends, it fails with a StoreError naming the conversation
    const error = await rejection(store.append(turn()));
    expect(error.message).toMatch(/locked/);
    expect(error.conversationId).toBe(C1);
    expect((error.cause as { code?: string }).code).toBe('SQLITE_BUSY');

    // and once the lock is gone the same append goes through
    other.exec('ROLLBACK');
    other.close();
    expect((await store.append(turn())).inserted).toBe(true);
  });

  it('reports a full disk as a StoreError naming the conversation', async () => {
    const store = storeAt();
    store.db.pragma(`max_page_count = ${store.db.pragma('page_count', { simple: true })}`);
    const error = await rejection(store.append(turn({ content: 'x'.repeat(100_000) })));
    expect(error.message).toMatch(/disk is full/);
    expect(error.conversationId).toBe(C1);
    expect((error.cause as { code?: string }).code).toBe('SQLITE_FULL');
  });

  it('fails with a StoreError after close', async () => {
    const store = storeAt();
    await store.close();
    const error = await rejection(store.get(C1));
    expect(error.message).toMatch(/closed/);
  });
});

describe('SqliteConversationStore: content and search', () => {
  it('keeps a search inside its conversation, between neighbouring ones', async () => {
    // given the same word in three conversations, numbered 1, 2 and 3
    const store = storeAt();
    for (const conversationId of ['slack:T1:C0', C1, 'slack:T1:C2']) {
      await store.append(turn({ conversationId, content: `hello from ${conversationId}` }));
    }

    // when searching the middle one, then only its turn comes back
    expect((await store.search(C1, 'hello')).map((m) => m.conversationId)).toEqual([C1]);
    const numbers = store.db.prepare('SELECT number FROM conversations ORDER BY number').pluck();
    expect(numbers.all()).toEqual([1, 2, 3]);
  });

  it('does not let a new conversation find the words of a deleted one with its number', async () => {
    // given the newest conversation deleted, and a new one that takes over its number
    const store = storeAt();
    await store.append(turn({ content: 'first words' }));
    await store.append(turn({ conversationId: 'slack:T1:C2', content: 'secret plans' }));
    await store.deleteConversation('slack:T1:C2');
    await store.append(turn({ conversationId: 'slack:T1:C3', content: 'new plans' }));

    // then its search finds only its own turn, and the index is consistent
    expect((await store.search('slack:T1:C3', 'secret plans')).map((m) => m.content)).toEqual([
      'new plans',
    ]);
    store.db.exec(`INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')`);
  });

  it('keeps search in step when plain SQL inserts, moves and deletes turns', async () => {
    // given a conversation written through the store
    const store = storeAt();
    await store.append(turn({ content: 'alpha' }));

    // when plain SQL adds a conversation and a turn, then moves the turn, then deletes it
    store.db.exec(`
      INSERT INTO conversations (id, channel_type, channel_id, scope, created_at, last_message_at)
      VALUES ('slack:T1:C9', 'slack', 'C9', 'channel', '2026-01-01', '2026-01-01');
      INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, scope,
        channel_type, channel_id)
      VALUES ('raw-1', 'slack:T1:C9', 'slack:U1', 'beta', '2026-01-01T00:00:00.000Z',
        'channel', 'slack', 'C9');`);
    expect((await store.search('slack:T1:C9', 'beta')).map((m) => m.id)).toEqual(['raw-1']);
    store.db.exec(`UPDATE messages SET conversation_id = '${C1}' WHERE id = 'raw-1'`);
    expect(await store.search('slack:T1:C9', 'beta')).toEqual([]);
    expect((await store.search(C1, 'beta')).map((m) => m.id)).toEqual(['raw-1']);
    store.db.exec(`DELETE FROM messages WHERE id = 'raw-1'`);

    // then nothing of it is left in the index
    expect(await store.search(C1, 'beta')).toEqual([]);
    const count = store.db.prepare(
      `SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'beta'`,
    );
    expect(count.pluck().get()).toBe(0);
    store.db.exec(`INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')`);
  });

  it.each([
    `'; DROP TABLE messages; --`,
    'NEAR(hello world, 2)',
    'hello* OR NOT "world',
    '% _ %_',
    'content : hello',
    'rowid : hello',
  ])('survives the query %j', async (query) => {
    const store = storeAt();
    await store.append(turn({ content: 'hello world' }));
    const found = await store.search(C1, query);
    expect(found.length).toBeLessThanOrEqual(1);
    expect(await store.get(C1)).toHaveLength(1);
  });

  it('finds an old turn through its rare word when a common word floods the conversation', async () => {
    // given an old turn with a rare word, then 300 newer turns sharing a common one
    const store = storeAt();
    const old = await store.append(turn({ content: 'the zanzibar shipment is late' }));
    await Promise.all(
      Array.from({ length: 300 }, (_, i) => store.append(turn({ content: `the weather ${i}` }))),
    );

    // when searching for both words
    const found = await store.search(C1, 'the zanzibar');

    // then the turn with both comes first, and the common word still finds newer turns
    expect(found[0]?.id).toBe(old.message.id);
    expect(found).toHaveLength(10);
  });

  it('stores and finds a 1 MB turn, truncating it to the token cap', async () => {
    const store = storeAt();
    const content = `needle ${'lorem ipsum dolor sit amet '.repeat(40_000)}`.slice(0, 1024 * 1024);
    await store.append(turn({ content }));
    expect((await store.get(C1))[0]?.content).toBe(content);
    const [hit] = await store.search(C1, 'needle', { tokenCap: 100 });
    expect(content.startsWith(hit!.content)).toBe(true);
    expect(hit!.content.length).toBeLessThan(1000);
  });

  it('keeps emoji, right-to-left text and combining marks exactly, and finds them', async () => {
    const store = storeAt();
    const texts = [
      'family 👨‍👩‍👧‍👦 and flags 🇫🇷🏳️‍🌈',
      'مرحبا بالعالم',
      'שלום עולם',
      'cafe\u0301 in decomposed form',
      '東京で会いましょう',
      'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐',
    ];
    for (const content of texts) await store.append(turn({ content }));
    expect((await store.get(C1)).map((m) => m.content)).toEqual(texts);
    expect((await store.search(C1, 'بالعالم'))[0]?.content).toBe(texts[1]);
    expect((await store.search(C1, 'עולם'))[0]?.content).toBe(texts[2]);
    expect((await store.search(C1, 'café'))[0]?.content).toBe(texts[3]);
  });

  it('normalizes timestamps to ISO UTC and rejects what is not a date', async () => {
    const store = storeAt();
    const { message } = await store.append(turn({ timestamp: '2026-03-10T16:00:00+01:00' }));
    expect(message.timestamp).toBe('2026-03-10T15:00:00.000Z');
    expect((await store.get(C1))[0]?.timestamp).toBe('2026-03-10T15:00:00.000Z');
    const error = await rejection(store.append(turn({ timestamp: 'last tuesday' })));
    expect(error.message).toMatch(/not a date/);
  });

  it('keeps a timestamp already in its stored form exactly as Date would print it', () => {
    // normalizeTimestamp returns such text untouched, without parsing it: every day of every
    // month (leap years, centuries, days that do not exist) must come out as Date makes it.
    const outcome = (text: string) => {
      try {
        return normalizeTimestamp(text);
      } catch {
        return 'not a date';
      }
    };
    for (const year of ['0000', '1999', '2000', '2024', '2026', '2100', '9999']) {
      for (let month = 0; month <= 13; month++) {
        for (let day = 0; day <= 32; day++) {
          for (const time of ['00:00:00.000', '23:59:59.999', '24:00:00.000', '12:60:00.000']) {
            const pad = (n: number) => String(n).padStart(2, '0');
            const text = `${year}-${pad(month)}-${pad(day)}T${time}Z`;
            const date = new Date(text);
            const expected = Number.isNaN(date.getTime()) ? 'not a date' : date.toISOString();
            expect(outcome(text), text).toBe(expected);
          }
        }
      }
    }
    expect(outcome('2026-11-21T09:30:00.000Z')).toBe('2026-11-21T09:30:00.000Z');
    expect(outcome(' 2026-11-21T09:30:00.000Z ')).toBe('2026-11-21T09:30:00.000Z');
    expect(outcome('2026-02-29T09:30:00.000Z')).toBe('2026-03-01T09:30:00.000Z');
  });
});

describe('SqliteConversationStore: what SQL users see', () => {
  it('keeps edits as revisions and removes everything of a deleted conversation', async () => {
    const store = storeAt();
    await store.append(turn({ messageId: 'e1', content: 'first draft', mentions: ['slack:U2'] }));
    await store.recordEdit({
      channelType: 'slack',
      channelId: 'C1',
      messageId: 'e1',
      content: 'final',
      editedAt: '2026-02-01T00:00:00Z',
    });
    const count = (sql: string) => store.db.prepare(sql).pluck().get() as number;
    expect(count(`SELECT count(*) FROM message_revisions WHERE content = 'first draft'`)).toBe(1);
    expect(count(`SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'final'`)).toBe(1);

    expect(await store.deleteConversation(C1)).toBe(true);
    for (const table of ['messages', 'message_mentions', 'message_revisions', 'conversations']) {
      expect(count(`SELECT count(*) FROM ${table}`)).toBe(0);
    }
    expect(count(`SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'final'`)).toBe(0);
  });

  it('keeps no revision of an edit that comes after a later one', async () => {
    // given a turn edited twice, then the first edit delivered again
    const store = storeAt();
    await store.append(turn({ messageId: 'e1', content: 'draft' }));
    const edit = (content: string, editedAt: string) =>
      store.recordEdit({
        channelType: 'slack',
        channelId: 'C1',
        messageId: 'e1',
        content,
        editedAt,
      });
    await edit('first edit', '2026-02-01T00:01:00.000Z');
    await edit('second edit', '2026-02-01T00:02:00.000Z');
    await edit('first edit', '2026-02-01T00:01:00.000Z');

    // then the revisions are the texts each edit replaced, in order, and nothing more
    const revisions = store.db
      .prepare('SELECT content, replaced_at FROM message_revisions ORDER BY id')
      .all();
    expect(revisions).toEqual([
      { content: 'draft', replaced_at: '2026-02-01T00:01:00.000Z' },
      { content: 'first edit', replaced_at: '2026-02-01T00:02:00.000Z' },
    ]);
  });

  it('forgets a participant so that nothing of theirs stays searchable, even raw', async () => {
    const store = storeAt();
    await store.append(turn({ messageId: 'x1', content: 'my password is hunter2' }));
    await store.recordEdit({
      channelType: 'slack',
      channelId: 'C1',
      messageId: 'x1',
      content: 'oops',
      editedAt: '2026-02-01T00:00:00Z',
    });
    await store.append(
      turn({ participant: { kind: 'user', id: 'slack:U2' }, mentions: ['slack:U1'] }),
    );
    expect(await store.forgetParticipant('slack:U1', { mode: 'redact' })).toBe(1);
    const count = (sql: string) => store.db.prepare(sql).pluck().get() as number;
    expect(count(`SELECT count(*) FROM message_revisions`)).toBe(0);
    expect(
      count(`SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'hunter2 OR oops'`),
    ).toBe(0);
    expect(await store.forgetParticipant('slack:U1')).toBe(1);
    expect(count(`SELECT count(*) FROM message_mentions WHERE participant_id = 'slack:U1'`)).toBe(
      0,
    );
    expect(count(`SELECT count(*) FROM participants WHERE id = 'slack:U1'`)).toBe(0);
  });

  it.each(['delete', 'redact'] as const)(
    'leaves no trace of a forgotten person in the file or its WAL (%s)',
    async (mode) => {
      const path = join(dir, 'colloquy.db');
      const store = storeAt(path);
      const secret = 'quokkazanzibar7731';
      const name = 'Wilhelmina Quetzalcoatl';
      const person = { kind: 'user' as const, id: 'slack:U9', displayName: name };
      for (let i = 0; i < 200; i++) await store.append(turn({ content: `weather ${i} is fine` }));
      await store.append(turn({ participant: person, content: `my code is ${secret}` }));
      await store.append(
        turn({ participant: person, content: `${secret} ${'long '.repeat(2000)}` }),
      );
      await store.append(
        turn({ conversationId: 'slack:T1:C2', participant: person, content: `again ${secret}` }),
      );
      // a Slack mention (its raw text kept in the metadata), answered with its prompt recorded
      const mention = slackMention('U9', `<@UBOT> my pin is ${secret}`, '1767225600.000100');
      await recordRun(store, mention, `${name}: @bot my pin is ${secret}`);
      // a rolling summary that retells it
      const summary = turn({
        participant: { kind: 'agent', id: 'support' },
        content: `${name} gave the code ${secret}`,
      });
      Object.assign(summary.metadata, { isSummary: true, summaryForAgentId: 'support' });
      await store.append(summary);
      for (let i = 0; i < 200; i++) await store.append(turn({ content: `later ${i} as well` }));
      await store.checkpoint();

      await store.forgetParticipant(person.id, { mode });
      await store.checkpoint();
      store.db.pragma('wal_checkpoint(TRUNCATE)');

      const wal = `${path}-wal`;
      const bytes = Buffer.concat([
        readFileSync(path),
        existsSync(wal) ? readFileSync(wal) : Buffer.alloc(0),
      ]);
      expect(bytes.includes(secret)).toBe(false);
      expect(bytes.includes(name)).toBe(false);
      expect(await store.search(C1, 'weather')).not.toEqual([]);
    },
  );

  it('leaves no trace of a deleted conversation in the file, nor of the people only it had', async () => {
    const path = join(dir, 'colloquy.db');
    const store = storeAt(path);
    const secret = 'quokkazanzibar7731';
    const name = 'Wilhelmina Quetzalcoatl';
    const person = { kind: 'user' as const, id: 'slack:U9', displayName: name };
    const C2 = 'slack:T1:C2';
    for (let i = 0; i < 200; i++) await store.append(turn({ content: `weather ${i} is fine` }));
    await store.append(turn({ conversationId: C2, participant: person, content: secret }));
    await recordRun(
      store,
      turn({ conversationId: C2, content: `re ${secret}` }),
      `${name}: ${secret}`,
    );
    await store.checkpoint();

    expect(await store.deleteConversation(C2)).toBe(true);
    await store.checkpoint();
    store.db.pragma('wal_checkpoint(TRUNCATE)');

    const ids = store.db.prepare('SELECT id FROM participants').pluck().all();
    expect(ids).toEqual(['slack:U1']);
    const wal = `${path}-wal`;
    const bytes = Buffer.concat([
      readFileSync(path),
      existsSync(wal) ? readFileSync(wal) : Buffer.alloc(0),
    ]);
    expect(bytes.includes(secret)).toBe(false);
    expect(bytes.includes(name)).toBe(false);
  });

  it('reads message rows in the column order the raw-mode mapping expects', () => {
    const store = storeAt();
    const { sql, params } = queries.buildGetQuery(C1, {}, SQLITE_DIALECT);
    const names = store.db
      .prepare(sql)
      .columns()
      .map((c) => c.name);
    expect(names).toEqual([...rows.MESSAGE_COLUMN_NAMES]);
    expect(params.conversation).toBe(C1);
  });

  it('answers the addressed-only query from indexes, never by scanning the conversation', () => {
    const store = storeAt();
    const { buildGetQuery } = queries;
    const { sql, params } = buildGetQuery(
      C1,
      { concerning: { aliases: ['bot', 'slack:UBOT'] } },
      SQLITE_DIALECT,
    );
    const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[];
    const scans = plan.map((p) => p.detail).filter((d) => /^SCAN (m|mm|messages)\b/.test(d));
    expect(scans).toEqual([]);
    const details = plan.map((p) => p.detail).join('\n');
    expect(details).toMatch(/message_mentions_time_idx/);
    // the branches are merged in index order: nothing is collected and sorted but the
    // mentions of a returned turn (the correlated subquery's ORDER BY rowid)
    expect(details).toMatch(/MERGE \(UNION\)/);
    expect(details.match(/USE TEMP B-TREE/g)).toEqual(['USE TEMP B-TREE']);
  });

  it('reads the presses on one message from the replies to its author, never the conversation', () => {
    const store = storeAt();
    const replyTo = { participantId: 'bot', messageId: '1712345678.000100' };
    const since = { sinceTimestamp: '2026-01-01T00:00:00.000Z', replyTo, limit: 1000 };
    const { sql, params } = queries.buildGetQuery(C1, since, SQLITE_DIALECT);
    const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[];
    const details = plan.map((p) => p.detail).join('\n');
    expect(details).toMatch(/SEARCH m USING INDEX messages_conversation_reply_to_idx/);
    expect(details).not.toMatch(/^SCAN m\b/m);
  });

  it('searches a word inside one conversation as a rowid range of the index', () => {
    const store = storeAt();
    const search = `SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'x'
      AND rowid BETWEEN 1 << 32 AND (1 << 32) | 4294967295 ORDER BY rowid LIMIT 5`;
    const [step] = store.db.prepare(`EXPLAIN QUERY PLAN ${search}`).all() as { detail: string }[];
    // FTS5 takes the MATCH (M) and both rowid bounds (>, <) itself, in rowid order
    expect(step?.detail).toMatch(/^SCAN messages_fts VIRTUAL TABLE INDEX \d+:M\d*></);
  });

  it("reads a conversation's runs by its index when draining, forgetting and deleting", () => {
    const store = storeAt();
    const statements: [string, unknown[]][] = [
      [RUNS_IN_CONVERSATION, [C1, JSON.stringify(['pending', 'running'])]],
      [SQL.forgetPrompts, [JSON.stringify([C1, 'slack:T1:C2'])]],
      [SQL.deleteRuns, [C1]],
    ];
    for (const [sql, params] of statements) {
      const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as {
        detail: string;
      }[];
      const details = plan.map((p) => p.detail).join('\n');
      expect(details, sql).toMatch(/SEARCH (r|agent_runs) USING INDEX agent_runs_conversation_idx/);
      expect(details, sql).not.toMatch(/^SCAN (r|agent_runs)\b/m);
    }
  });

  it("finds the threads under a forgotten person's turns by the thread parent index", () => {
    const store = storeAt();
    const plan = store.db
      .prepare(`EXPLAIN QUERY PLAN ${SQL.threadsUnder}`)
      .all('telegram:alice') as {
      detail: string;
    }[];
    // the partial index holds the thread turns alone: reading it reads those, then each
    // one's parent by its id, and no other turn
    expect(plan.map((p) => p.detail)).toEqual([
      expect.stringMatching(/^(SCAN|SEARCH) t USING INDEX messages_thread_parent_idx\b/),
      expect.stringMatching(/^SEARCH h USING INDEX messages_id_uq \(id=\?\)$/),
    ]);
  });
});

/** Alice and the conversation C1, as plain rows of an older file (the store writes them first). */
const ALICE_IN_C1 = `
  INSERT INTO participant_rows VALUES ('slack:U1', 'user', 'Alice', '2026-01-01T00:00:00.000Z',
    '2026-01-01T00:00:00.000Z');
  INSERT INTO conversation_rows (id, channel_type, channel_id, scope, created_at,
    last_message_at) VALUES ('${C1}', 'slack', 'C1', 'channel', '2026-01-01T00:00:00.000Z',
    '2026-01-01T00:00:00.000Z');`;

/** A copy of the first `count` migrations, as an older colloquy shipped them. */
async function migrationsUpTo(parent: string, count: number): Promise<string> {
  const { readFileSync } = await import('node:fs');
  const folder = join(parent, `migrations-${count}`);
  mkdirSync(join(folder, 'meta'), { recursive: true });
  const journal = JSON.parse(
    readFileSync(join(migrationsFolder(), 'meta/_journal.json'), 'utf8'),
  ) as { entries: { tag: string }[] };
  const entries = journal.entries.slice(0, count);
  for (const { tag } of entries) {
    copyFileSync(join(migrationsFolder(), `${tag}.sql`), join(folder, `${tag}.sql`));
  }
  writeFileSync(join(folder, 'meta/_journal.json'), JSON.stringify({ ...journal, entries }));
  return folder;
}

const queries = await import('../../../db/queries.js');
const { SQL, SQLITE_DIALECT } = await import('../../../db/sqlite/statements.js');
const { RUNS_IN_CONVERSATION } = await import('../../../db/sqlite/runs.js');
const rows = await import('../../../db/rows.js');
