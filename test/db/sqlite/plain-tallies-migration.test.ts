import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { SqliteConversationStore, migrationsFolder } from 'colloquy/sqlite';
import { restoreViews, viewsOfMigrations } from '../../../db/sqlite/views.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The migration to plain `conversations` and `participants` tables, on a file written with the
 * schema before it (tallies folded every 256 and 1,024 turns, views over `*_rows` tables): every
 * turn, run, reply, participant, conversation and search hit is there afterwards, unchanged.
 */

const MIGRATION = '_plain_tallies';
const WORDS = ['refund', 'invoice', 'password', 'weather'];

let dir: string;
let path: string;
let before: ReturnType<typeof snapshot>;
let after: ReturnType<typeof snapshot>;
let store: SqliteConversationStore;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'colloquy-plain-tallies-'));
  path = join(dir, 'colloquy.db');
  const db = new Database(path);
  migrate(drizzle(db), { migrationsFolder: migrationsBefore(MIGRATION) });
  writeHistory(db);
  before = snapshot(db);
  db.close();
  store = new SqliteConversationStore({ path });
  after = snapshot(store.db);
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the migration to plain conversation and participant tables', () => {
  it('keeps every turn, mention, revision, run and reply as it was', () => {
    expect(before.messages).toHaveLength(1_206);
    // Later migrations add columns (`attachments`), empty on every turn written before them.
    const { columns } = before;
    expect(after.messages.map((row) => pick(row, columns))).toEqual(before.messages);
    expect(after.mentions).toEqual(before.mentions);
    expect(after.revisions).toEqual(before.revisions);
    expect(after.runs).toEqual(before.runs);
    expect(after.runs.filter((run) => run.reply_id !== null)).toHaveLength(110);
    expect(after.authors).toEqual(before.authors);
  });

  it('keeps every conversation and participant with the tallies the views read', () => {
    expect(before.conversations).toHaveLength(3);
    expect(after.conversations).toEqual(before.conversations);
    expect(after.participants).toHaveLength(5);
    expect(after.participants).toEqual(before.participants);
    expect(after.conversations).toEqual(countedConversations(store.db));
  });

  it('keeps the transcript, the sources and every search hit in plain SQL', () => {
    expect(after.transcript).toEqual(before.transcript);
    expect(after.sources).toEqual(before.sources);
    for (const word of WORDS) {
      expect(before.search[word]!.length).toBeGreaterThan(0);
      expect(after.search[word]).toEqual(before.search[word]);
    }
  });

  it('leaves tables in place of the views, and no fold behind', () => {
    const kinds = store.db
      .prepare(
        `SELECT name, type FROM sqlite_master WHERE name IN
        ('conversations', 'participants', 'conversation_rows', 'participant_rows') ORDER BY name`,
      )
      .all();
    expect(kinds).toEqual([
      { name: 'conversations', type: 'table' },
      { name: 'participants', type: 'table' },
    ]);
    const left = store.db
      .prepare(
        `SELECT name FROM sqlite_master WHERE sql LIKE '%folded_seq%'
        UNION ALL SELECT key FROM colloquy_state WHERE key LIKE '%folded_seq'`,
      )
      .all();
    expect(left).toEqual([]);
  });

  it('finds the same newest turns through the store and goes on counting and numbering', async () => {
    // The store ranks a word's newest matches in the conversation (50 for one word).
    for (const word of WORDS) {
      for (const conversation of ['slack:T1:C0', 'slack:T1:C1', 'slack:T1:C2']) {
        const hits = await store.search(conversation, word, { limit: 1_000, tokenCap: 1e9 });
        const newest = before.search[word]!.filter((hit) => hit.conversation_id === conversation)
          .map((hit) => hit.seq)
          .sort((a, b) => b - a)
          .slice(0, 50);
        expect(newest.length).toBeGreaterThan(0);
        expect(hits.map((hit) => hit.sequence ?? 0).sort((a, b) => b - a)).toEqual(newest);
      }
    }
    const { message } = await store.append({
      id: 'after-migration',
      conversationId: 'slack:T1:C0',
      participant: { kind: 'user', id: 'slack:U1', displayName: 'User 1' },
      content: 'a refund after the migration',
      timestamp: '2026-02-01T00:00:00.000Z',
      scope: 'channel',
      metadata: { channelType: 'slack', channelId: 'C0', messageId: 'p-after' },
    });
    // The newest turn was deleted before the migration: its seq is not given again.
    expect(message.sequence).toBe(1_211);
    expect(snapshot(store.db).conversations).toEqual(countedConversations(store.db));
    const [hit] = await store.search('slack:T1:C0', 'migration');
    expect(hit?.id).toBe('after-migration');
  });

  it('restores each view from the migrations as it reads now', () => {
    const tags = journal().entries.map((entry) => entry.tag);
    const views = viewsOfMigrations(migrationsFolder(), tags);
    for (const name of views.keys()) store.db.exec(`DROP VIEW ${name}`);
    expect(restoreViews(store.db, views).sort()).toEqual([
      'interactions',
      'message_attachments',
      'message_search',
      'message_sources',
      'transcript',
    ]);
    const now = snapshot(store.db);
    for (const word of WORDS) expect(now.search[word]!.length).toBeGreaterThan(0);
    expect(now.transcript.length).toBeGreaterThan(1_000);
  });
});

function pick(row: unknown, columns: readonly string[]): Record<string, unknown> {
  const record = row as Record<string, unknown>;
  return Object.fromEntries(columns.map((column) => [column, record[column]]));
}

function journal(): { entries: { tag: string }[] } {
  return JSON.parse(readFileSync(join(migrationsFolder(), 'meta/_journal.json'), 'utf8')) as {
    entries: { tag: string }[];
  };
}

/** The committed migrations up to (not including) the one whose tag ends with `tag`. */
function migrationsBefore(tag: string): string {
  const folder = migrationsFolder();
  const { entries: all } = journal();
  const at = all.findIndex((entry) => entry.tag.endsWith(tag));
  expect(at).toBeGreaterThan(0);
  const old = join(dir, 'migrations');
  mkdirSync(join(old, 'meta'), { recursive: true });
  for (const file of readdirSync(folder)) {
    if (file.endsWith('.sql')) copyFileSync(join(folder, file), join(old, file));
  }
  const entries = all.slice(0, at);
  writeFileSync(join(old, 'meta/_journal.json'), JSON.stringify({ ...journal(), entries }));
  return old;
}

/**
 * 1,100 turns in three conversations by four people and an agent, written as that schema's
 * store wrote them (rows first, then the turn; the folds fire on the way): mentions, edits
 * with revisions, replies with their runs and sources, and the newest turn deleted.
 */
function writeHistory(db: Database.Database): void {
  const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
  const person = db.prepare(`INSERT INTO participant_rows
      (id, kind, display_name, first_seen_at, last_seen_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (id) DO NOTHING`);
  const conversation = db.prepare(`INSERT INTO conversation_rows (id, channel_type, channel_id,
      channel_name, thread_id, scope, created_at, last_message_at, message_count, title)
    VALUES (?, 'slack', ?, ?, NULL, 'channel', ?, ?, 0, ?) ON CONFLICT (id) DO NOTHING`);
  const turn = db.prepare(`INSERT INTO messages (seq, id, conversation_id, participant_id,
      content, timestamp, scope, channel_type, channel_id, platform_message_id,
      reply_to_message_id, reply_to_participant_id, metadata, sources, delivery, author_kind)
    VALUES (max(coalesce((SELECT max(seq) FROM messages), 0), coalesce((SELECT CAST(value AS
        INTEGER) FROM colloquy_state WHERE key = 'messages_seq_floor'), 0)) + 1,
      @id, @conversation, @author, @content, @timestamp, 'channel', 'slack', @channel, @platform,
      @replyTo, @replyToAuthor, '{}', @sources, @delivery, @kind)`);
  const mention = db.prepare(`INSERT INTO message_mentions
    (message_seq, conversation_id, participant_id, timestamp) VALUES (?, ?, ?, ?)`);
  const run = db.prepare(`INSERT INTO agent_runs (id, message_id, conversation_id, agent_id,
      status, created_at, started_at, finished_at, model, reply_id, attempts)
    VALUES (?, ?, ?, 'slack:UBOT', 'answered', ?, ?, ?, 'test-model', ?, 1)`);
  const edit = db.prepare(`INSERT INTO message_revisions (message_seq, content, replaced_at)
    SELECT seq, content, ? FROM messages WHERE id = ?`);
  const applyEdit = db.prepare(`UPDATE messages SET content = ?, edited_at = ? WHERE id = ?`);
  db.transaction(() => {
    person.run('slack:UBOT', 'agent', 'Support', at(0), at(0));
    for (let i = 0; i < 1_100; i++) {
      const channel = `C${i % 3}`;
      const id = `slack:T1:${channel}`;
      conversation.run(id, channel, `#room-${i % 3}`, at(i), at(i), i % 3 === 0 ? 'ops' : null);
      const author = `slack:U${i % 4}`;
      person.run(author, 'user', `User ${i % 4}`, at(i), at(i));
      const words = `${WORDS[i % 4]} number ${i}`;
      const { lastInsertRowid } = turn.run({
        id: `m-${i}`,
        conversation: id,
        author,
        content: i % 7 === 0 ? `<@UBOT> ${words}` : words,
        timestamp: at(i),
        channel,
        platform: `p-${i}`,
        replyTo: null,
        replyToAuthor: null,
        sources: null,
        delivery: null,
        kind: 'user',
      });
      if (i % 7 === 0) mention.run(lastInsertRowid, id, 'slack:UBOT', at(i));
      if (i % 10 === 0 && i < 1_099) {
        turn.run({
          id: `r-${i}`,
          conversation: id,
          author: 'slack:UBOT',
          content: `about the ${WORDS[i % 4]}: answer ${i}`,
          timestamp: at(i),
          channel,
          platform: `pr-${i}`,
          replyTo: `m-${i}`,
          replyToAuthor: author,
          sources: i % 20 === 0 ? JSON.stringify([{ documentId: `d${i}`, name: 'FAQ' }]) : null,
          delivery: 'sent',
          kind: 'agent',
        });
        run.run(`m-${i}:slack:UBOT`, `m-${i}`, id, at(i), at(i), at(i), `r-${i}`);
      }
      if (i % 50 === 5) {
        edit.run(at(i + 1), `m-${i}`);
        applyEdit.run(`${words} (edited)`, at(i + 1), `m-${i}`);
      }
    }
    // The newest turn deleted: its seq becomes the floor, and some turns deleted anywhere.
    db.exec(`DELETE FROM messages WHERE seq = (SELECT max(seq) FROM messages)`);
    db.exec(`DELETE FROM messages WHERE id IN ('m-12', 'm-500', 'r-600')`);
    // What that store did after deleting: its tallies again, over the folded turns left.
    db.exec(`UPDATE conversation_rows SET
      message_count = (SELECT count(*) FROM messages m
        WHERE m.conversation_id = conversation_rows.id AND m.seq <= ${FOLDED}),
      created_at = coalesce((SELECT min(timestamp) FROM messages m
        WHERE m.conversation_id = conversation_rows.id AND m.seq <= ${FOLDED}), created_at),
      last_message_at = coalesce((SELECT max(timestamp) FROM messages m
        WHERE m.conversation_id = conversation_rows.id AND m.seq <= ${FOLDED}), last_message_at)`);
  })();
}

const FOLDED = `(SELECT CAST(value AS INTEGER) FROM colloquy_state
  WHERE key = 'messages_folded_seq')`;

interface SearchHit {
  conversation_id: string;
  seq: number;
}

function snapshot(db: Database.Database) {
  const all = (sql: string) => db.prepare(sql).all() as Record<string, unknown>[];
  const search: Record<string, SearchHit[]> = {};
  for (const word of WORDS) {
    search[word] = db
      .prepare(
        `SELECT conversation_id, seq, speaker, speaker_id, text, is_deleted FROM message_search
        WHERE message_search MATCH ? ORDER BY seq`,
      )
      .all(word) as SearchHit[];
  }
  return {
    messages: all(`SELECT * FROM messages ORDER BY seq`),
    columns: db.prepare(`SELECT name FROM pragma_table_info('messages')`).pluck().all() as string[],
    mentions: all(`SELECT * FROM message_mentions ORDER BY message_seq, participant_id`),
    revisions: all(`SELECT * FROM message_revisions ORDER BY id`),
    runs: all(`SELECT * FROM agent_runs ORDER BY id`),
    authors: all(`SELECT * FROM conversation_authors ORDER BY 1, 2, 3`),
    conversations: all(`SELECT * FROM conversations ORDER BY id`),
    participants: all(`SELECT * FROM participants ORDER BY id`),
    transcript: all(`SELECT * FROM transcript`),
    sources: all(`SELECT * FROM message_sources ORDER BY message_seq, position`),
    search,
  };
}

function countedConversations(db: Database.Database) {
  return db
    .prepare(
      `SELECT c.id, c.channel_type, c.channel_id, c.channel_name, c.thread_id, c.scope,
        min(m.timestamp) AS created_at, max(m.timestamp) AS last_message_at,
        count(*) AS message_count, c.number, c.title, c.metadata
      FROM conversations c JOIN messages m ON m.conversation_id = c.id
      GROUP BY c.id ORDER BY c.id`,
    )
    .all();
}
