/**
 * An experiment, not a target: what the bytes and WAL pages of a turn would be if `messages`
 * kept its conversation and author as integer keys (the documented table becoming a view over
 * such rows), next to the store as it is and the lean schema, on the same corpus.
 * docs/benchmarks.md ("Integer keys") has its results and what it leaves out.
 *
 *   npx tsx test/bench/integer-keys.ts [--dir path]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { SqliteConversationStore } from '../../db/sqlite/index.js';
import { configureConnection } from '../../db/sqlite/pragmas.js';
import { FOLD_EVERY, FOLD_PARTICIPANTS_EVERY } from '../../db/sqlite/schema.js';
import type { NewMessage } from '../../src/types.js';
import { Corpus } from './corpus.js';
import { fileSize } from './store-write.js';
import { leanSchema, walPages } from './writes.js';

/** One way of writing turns: alone (its own commit) or many in one commit. */
interface Writer {
  db: Database.Database;
  one(turn: NewMessage): Promise<void> | void;
  many(turns: NewMessage[]): Promise<void> | void;
  turns(): number;
  close(): Promise<void> | void;
}

/**
 * The store's turns with integer keys: `message_rows` names its conversation, channel and
 * author by number; `times` says whether `timestamp` and `created_at` stay ISO text (as the
 * documented columns are) or become integer milliseconds. The same indexes, FTS5 table, fold,
 * author and mention writes as the store's, the upserts of the conversation and author first.
 */
function integerKeys(path: string, times: 'text' | 'ms'): Writer {
  const db = new Database(path);
  configureConnection(db, { busyTimeoutMs: 5000, readonly: false, durability: 'full' });
  const time = times === 'text' ? 'TEXT' : 'INTEGER';
  const iso = (x: string) =>
    times === 'text' ? x : `strftime('%Y-%m-%dT%H:%M:%fZ', ${x} / 1000.0, 'unixepoch')`;
  const now =
    times === 'text'
      ? `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`
      : `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`;
  const folded = (key: string) =>
    `(SELECT CAST(value AS INTEGER) FROM colloquy_state WHERE key = '${key}')`;
  db.exec(`
    CREATE TABLE channels (number INTEGER PRIMARY KEY, channel_type TEXT NOT NULL,
      channel_id TEXT NOT NULL, UNIQUE (channel_type, channel_id));
    CREATE TABLE conversation_rows (number INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
      channel INTEGER NOT NULL, channel_name TEXT, thread_id TEXT, scope TEXT NOT NULL,
      created_at TEXT NOT NULL, last_message_at TEXT NOT NULL,
      message_count INTEGER NOT NULL DEFAULT 0, title TEXT, metadata TEXT);
    CREATE TABLE participant_rows (number INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
      kind TEXT NOT NULL, display_name TEXT, first_seen_at TEXT NOT NULL,
      last_seen_at TEXT NOT NULL);
    CREATE TABLE message_rows (seq INTEGER PRIMARY KEY, id TEXT NOT NULL,
      conversation INTEGER NOT NULL, channel INTEGER NOT NULL, author INTEGER NOT NULL,
      content TEXT NOT NULL, at ${time} NOT NULL, platform_message_id TEXT,
      reply_to_message_id TEXT, reply_to_author INTEGER, is_summary INTEGER NOT NULL DEFAULT 0,
      summary_for_agent_id TEXT, edited_at TEXT, deleted_at TEXT, delivery TEXT, metadata TEXT,
      trace_id TEXT, sources TEXT, reasoning TEXT, delegation_id TEXT, delegated_by TEXT,
      delegated_to TEXT, author_kind INTEGER NOT NULL DEFAULT 0,
      created_at ${time} NOT NULL DEFAULT (${now}));
    CREATE UNIQUE INDEX message_rows_id_uq ON message_rows (id);
    CREATE UNIQUE INDEX message_rows_platform_uq ON message_rows (channel, platform_message_id)
      WHERE platform_message_id IS NOT NULL;
    CREATE INDEX message_rows_time_idx ON message_rows (conversation, at, seq);
    CREATE INDEX message_rows_author_idx ON message_rows (conversation, author, at)
      WHERE author_kind <> 0;
    CREATE INDEX message_rows_reply_idx ON message_rows (conversation, reply_to_author, at)
      WHERE reply_to_author IS NOT NULL;
    CREATE INDEX message_rows_summary_idx ON message_rows (conversation, summary_for_agent_id, seq)
      WHERE is_summary = 1;
    CREATE INDEX message_rows_delegation_idx ON message_rows (delegation_id, seq)
      WHERE delegation_id IS NOT NULL;
    CREATE INDEX message_rows_trace_idx ON message_rows (trace_id) WHERE trace_id IS NOT NULL;
    CREATE INDEX message_rows_sources_idx ON message_rows (seq) WHERE sources IS NOT NULL;
    CREATE TABLE message_mentions (message_seq INTEGER NOT NULL, conversation_id TEXT NOT NULL,
      participant_id TEXT NOT NULL, timestamp TEXT NOT NULL,
      PRIMARY KEY (message_seq, participant_id));
    CREATE INDEX message_mentions_time_idx
      ON message_mentions (conversation_id, participant_id, timestamp, message_seq);
    CREATE INDEX message_mentions_participant_idx ON message_mentions (participant_id);
    CREATE TABLE conversation_authors (conversation INTEGER NOT NULL, author INTEGER NOT NULL,
      author_kind INTEGER NOT NULL, PRIMARY KEY (conversation, author, author_kind))
      WITHOUT ROWID;
    CREATE TABLE colloquy_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO colloquy_state VALUES ('messages_folded_seq', '0'),
      ('participants_folded_seq', '0');
    CREATE VIRTUAL TABLE messages_fts USING fts5(content, content = '', contentless_delete = 1,
      tokenize = 'unicode61 remove_diacritics 2');
    CREATE TRIGGER message_rows_fts AFTER INSERT ON message_rows BEGIN
      INSERT INTO messages_fts (rowid, content)
      VALUES ((new.conversation << 32) | (4294967295 - new.seq), new.content);
    END;
    CREATE TRIGGER message_rows_authors AFTER INSERT ON message_rows BEGIN
      INSERT OR IGNORE INTO conversation_authors
      VALUES (new.conversation, new.author, new.author_kind);
    END;
    CREATE TRIGGER message_rows_fold_conversations AFTER INSERT ON message_rows
    WHEN new.seq - ${folded('messages_folded_seq')} >= ${FOLD_EVERY} BEGIN
      UPDATE conversation_rows SET message_count = message_count + t.n,
        created_at = CASE WHEN message_count = 0 THEN t.first_at
          ELSE min(created_at, t.first_at) END,
        last_message_at = CASE WHEN message_count = 0 THEN t.last_at
          ELSE max(last_message_at, t.last_at) END
      FROM (SELECT conversation, count(*) AS n, ${iso('min(at)')} AS first_at,
          ${iso('max(at)')} AS last_at
        FROM message_rows NOT INDEXED
        WHERE seq > ${folded('messages_folded_seq')} AND seq <= new.seq
        GROUP BY conversation) AS t
      WHERE conversation_rows.number = t.conversation;
      UPDATE colloquy_state SET value = new.seq WHERE key = 'messages_folded_seq';
    END;
    CREATE TRIGGER message_rows_fold_participants AFTER INSERT ON message_rows
    WHEN new.seq - ${folded('participants_folded_seq')} >= ${FOLD_PARTICIPANTS_EVERY} BEGIN
      UPDATE participant_rows SET first_seen_at = min(first_seen_at, t.first_at),
        last_seen_at = max(last_seen_at, t.last_at)
      FROM (SELECT author, ${iso('min(at)')} AS first_at, ${iso('max(at)')} AS last_at
        FROM message_rows NOT INDEXED
        WHERE seq > ${folded('participants_folded_seq')} AND seq <= new.seq
        GROUP BY author) AS t
      WHERE participant_rows.number = t.author
        AND (t.first_at < first_seen_at OR t.last_at > last_seen_at);
      UPDATE colloquy_state SET value = new.seq WHERE key = 'participants_folded_seq';
    END;`);
  const channel = db.prepare(`INSERT INTO channels (channel_type, channel_id) VALUES (?, ?)
    ON CONFLICT DO NOTHING`);
  const author = db.prepare(`INSERT INTO participant_rows
      (id, kind, display_name, first_seen_at, last_seen_at) VALUES (@id, @kind, @name, @ts, @ts)
    ON CONFLICT (id) DO UPDATE SET kind = excluded.kind,
      display_name = coalesce(excluded.display_name, display_name)
    WHERE excluded.kind IS NOT kind
      OR (excluded.display_name IS NOT NULL AND excluded.display_name IS NOT display_name)`);
  const conversation = db.prepare(`INSERT INTO conversation_rows (id, channel, channel_name,
      thread_id, scope, created_at, last_message_at)
    VALUES (@conversationId, (SELECT number FROM channels
        WHERE channel_type = @channelType AND channel_id = @channelId),
      @channelName, @threadId, @scope, @timestamp, @timestamp)
    ON CONFLICT (id) DO UPDATE SET channel_name = coalesce(excluded.channel_name, channel_name)
    WHERE excluded.channel_name IS NOT NULL AND excluded.channel_name IS NOT channel_name`);
  const insert = db.prepare(`INSERT INTO message_rows (seq, id, conversation, channel, author,
      content, at, platform_message_id, reply_to_message_id, reply_to_author, metadata,
      author_kind)
    SELECT (SELECT coalesce(max(seq), 0) FROM message_rows) + 1, @id, c.number, c.channel,
      (SELECT number FROM participant_rows WHERE id = @participantId), @content, @at,
      @platformMessageId, @replyToMessageId,
      (SELECT number FROM participant_rows WHERE id = @replyToParticipantId), @metadata, @kind
    FROM conversation_rows c WHERE c.id = @conversationId
    ON CONFLICT DO NOTHING`);
  const mention = db.prepare(`INSERT OR IGNORE INTO message_mentions VALUES (?, ?, ?, ?)`);
  const kinds = { user: 0, agent: 1, system: 2 };
  const columns = new Set(['channelType', 'channelId', 'threadId', 'messageId', 'mentions']);
  const write = (turn: NewMessage) => {
    const meta = turn.metadata;
    const { replyToParticipantId, replyToMessageId } = meta;
    channel.run(meta.channelType, meta.channelId);
    author.run({
      id: turn.participant.id,
      kind: turn.participant.kind,
      name: turn.participant.displayName ?? null,
      ts: turn.timestamp,
    });
    conversation.run({
      conversationId: turn.conversationId,
      channelType: meta.channelType,
      channelId: meta.channelId,
      channelName: meta.channelName ?? null,
      threadId: meta.threadId ?? null,
      scope: turn.scope,
      timestamp: turn.timestamp,
    });
    // The rest of the metadata, as the store keeps it (NULL when there is none).
    const rest = Object.fromEntries(
      Object.entries(meta).filter(([key, value]) => !columns.has(key) && value !== undefined),
    );
    const { lastInsertRowid } = insert.run({
      id: turn.id,
      conversationId: turn.conversationId,
      participantId: turn.participant.id,
      content: turn.content,
      at: times === 'text' ? turn.timestamp : Date.parse(turn.timestamp),
      platformMessageId: meta.messageId ?? null,
      replyToMessageId: replyToMessageId ?? null,
      replyToParticipantId: replyToParticipantId ?? null,
      metadata: Object.keys(rest).length > 0 ? JSON.stringify(rest) : null,
      kind: kinds[turn.participant.kind],
    });
    for (const who of meta.mentions ?? []) {
      mention.run(lastInsertRowid, turn.conversationId, who, turn.timestamp);
    }
  };
  const one = db.transaction(write);
  const many = db.transaction((turns: NewMessage[]) => turns.forEach(write));
  return {
    db,
    one: (turn) => one.immediate(turn),
    many: (turns) => many.immediate(turns),
    turns: () => db.prepare('SELECT count(*) FROM message_rows').pluck().get() as number,
    close: () => void db.close(),
  };
}

/** The store as it is. */
function store(path: string): Writer {
  const opened = SqliteConversationStore.open(path);
  return {
    db: opened.db,
    one: async (turn) => void (await opened.append(turn)),
    many: async (turns) =>
      void (await opened.commit(turns.map((message) => ({ kind: 'append', message })))),
    turns: () => opened.db.prepare('SELECT count(*) FROM messages').pluck().get() as number,
    close: () => opened.close(),
  };
}

/** The bench's lean schema (FTS5, mention rows, a newest-N index). */
function lean(path: string): Writer {
  const opened = leanSchema(path);
  return {
    db: opened.db,
    one: (turn) => opened.insert(turn),
    many: (turns) => opened.batch(turns),
    turns: () => opened.db.prepare('SELECT count(*) FROM messages').pluck().get() as number,
    close: () => void opened.db.close(),
  };
}

async function measure(name: string, writer: Writer): Promise<void> {
  // The writes bench's phases: 20,000 turns in batches of 500, 5,000 alone, 50 batches of 100,
  // then the WAL's pages over 2,048 commits of one turn each.
  const corpus = new Corpus({ seed: 12 });
  for (let done = 0; done < 20_000; done += 500) await writer.many(corpus.take(500));
  let start = performance.now();
  for (const turn of corpus.take(5000)) await writer.one(turn);
  const alone = ((performance.now() - start) / 5000) * 1000;
  start = performance.now();
  for (let round = 0; round < 50; round++) await writer.many(corpus.take(100));
  const batched = ((performance.now() - start) / 5000) * 1000;
  let where = '';
  const pages = await walPages(
    writer.db,
    corpus.take(8 * FOLD_EVERY),
    (turn) => writer.one(turn),
    (text) => (where = text),
  );
  writer.db.pragma('wal_checkpoint(TRUNCATE)');
  const bytes = fileSize(writer.db.name) / writer.turns();
  console.log(
    `${name}: ${pages.toFixed(2)} WAL pages a single-turn commit, ${bytes.toFixed(0)} bytes a ` +
      `turn, ${alone.toFixed(0)} µs a turn alone, ${batched.toFixed(0)} µs a turn in batches of 100`,
  );
  console.log(`  where the pages go: ${where}`);
  await writer.close();
}

const { values } = parseArgs({ options: { dir: { type: 'string' } } });
const dir = values.dir ?? mkdtempSync(join(tmpdir(), 'colloquy-integer-keys-'));
try {
  await measure('the store', store(join(dir, 'store.db')));
  await measure('integer keys, ISO text times', integerKeys(join(dir, 'text.db'), 'text'));
  await measure('integer keys, integer ms times', integerKeys(join(dir, 'ms.db'), 'ms'));
  await measure('the lean schema', lean(join(dir, 'lean.db')));
} finally {
  if (values.dir === undefined) rmSync(dir, { recursive: true, force: true });
}
