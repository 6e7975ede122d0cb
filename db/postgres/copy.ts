import type Database from 'better-sqlite3';
import type pg from 'pg';
import { storableJson, withoutNul } from './errors.js';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { messages } from './schema.js';
import { PG } from './statements.js';

/** Rows per INSERT (well under Postgres's 65,535 parameters at 22 columns). */
const BATCH = 500;

/** What `copyFromSqlite` did, table by table: rows copied, and rows found there already. */
export interface CopyReport {
  messages: { copied: number; present: number };
  participants: number;
  conversations: number;
  mentions: number;
  revisions: number;
  runs: number;
  state: number;
}

/** Every column of `messages` a copy carries over (Postgres numbers and indexes rows itself). */
const MESSAGE_COLUMNS = getTableConfig(messages)
  .columns.map((column) => column.name)
  .filter((name) => !['seq', 'txid', 'search'].includes(name));

type Row = Record<string, unknown>;

/**
 * Copies a SQLite history into a Postgres store's database: participants, conversations,
 * messages in sequence order (Postgres numbers them anew), their mentions and revisions, agent
 * runs and state. Idempotent: what is there already (same id, or same platform message) is
 * left alone, so a second run copies nothing. `progress` hears each batch of messages.
 *
 * @example
 * ```ts
 * const report = await copyFromSqlite(sqlite.db, pgStore.pool, (n) => bar.tick(n));
 * ```
 */
export async function copyFromSqlite(
  from: Database.Database,
  to: pg.Pool,
  progress: (messages: number) => void = () => {},
): Promise<CopyReport> {
  const report: CopyReport = {
    messages: { copied: 0, present: 0 },
    participants: 0,
    conversations: 0,
    mentions: 0,
    revisions: 0,
    runs: 0,
    state: 0,
  };
  report.participants = await insertAll(
    to,
    'participants',
    ['id', 'kind', 'display_name', 'first_seen_at', 'last_seen_at'],
    from.prepare('SELECT * FROM participants').all() as Row[],
    `ON CONFLICT (id) DO UPDATE SET
       first_seen_at = least(participants.first_seen_at, excluded.first_seen_at),
       last_seen_at = greatest(participants.last_seen_at, excluded.last_seen_at)`,
  );
  report.conversations = await insertAll(
    to,
    'conversations',
    [
      'id',
      'channel_type',
      'channel_id',
      'channel_name',
      'thread_id',
      'scope',
      'created_at',
      'last_message_at',
      'message_count',
      'title',
      'metadata',
    ],
    from.prepare('SELECT * FROM conversations').all() as Row[],
    'ON CONFLICT (id) DO NOTHING',
  );
  const touched = new Set<string>();
  const mentions = from.prepare(
    'SELECT participant_id, conversation_id, timestamp FROM message_mentions WHERE message_seq = ? ORDER BY rowid',
  );
  const revisions = from.prepare(
    'SELECT content, replaced_at FROM message_revisions WHERE message_seq = ? ORDER BY id',
  );
  let batch: Row[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const { rows } = await insertRows(
      to,
      'messages',
      MESSAGE_COLUMNS,
      batch,
      'ON CONFLICT DO NOTHING RETURNING seq, id',
    );
    const newSeq = new Map(rows.map((row) => [row.id as string, row.seq as number]));
    const mentionRows: Row[] = [];
    const revisionRows: Row[] = [];
    for (const message of batch) {
      const seq = newSeq.get(message.id as string);
      if (seq === undefined) continue;
      touched.add(message.conversation_id as string);
      (mentions.all(message.seq) as Row[]).forEach((mention, position) =>
        mentionRows.push({ ...mention, message_seq: seq, position }),
      );
      for (const revision of revisions.all(message.seq) as Row[]) {
        revisionRows.push({ ...revision, message_seq: seq });
      }
    }
    report.messages.copied += newSeq.size;
    report.messages.present += batch.length - newSeq.size;
    report.mentions += await insertAll(
      to,
      'message_mentions',
      ['message_seq', 'conversation_id', 'participant_id', 'timestamp', 'position'],
      mentionRows,
      'ON CONFLICT DO NOTHING',
    );
    report.revisions += await insertAll(
      to,
      'message_revisions',
      ['message_seq', 'content', 'replaced_at'],
      revisionRows,
      '',
    );
    progress(batch.length);
    batch = [];
  };
  for (const row of from
    .prepare('SELECT * FROM messages ORDER BY seq')
    .iterate() as Iterable<Row>) {
    batch.push({ ...row, is_summary: row.is_summary === 1 });
    if (batch.length === BATCH) await flush();
  }
  await flush();
  // The conversations the copy added turns to count and span them.
  for (const id of touched) await to.query(PG.refreshConversation, [id]);
  report.runs = await insertAll(
    to,
    'agent_runs',
    [
      'id',
      'message_id',
      'conversation_id',
      'agent_id',
      'status',
      'created_at',
      'started_at',
      'finished_at',
      'model',
      'input_tokens',
      'output_tokens',
      'reply_id',
      'error',
      'attempts',
      'prompt',
    ],
    from.prepare('SELECT * FROM agent_runs').all() as Row[],
    'ON CONFLICT (id) DO NOTHING',
  );
  report.state = await insertAll(
    to,
    'colloquy_state',
    ['key', 'value', 'updated_at'],
    from.prepare('SELECT * FROM colloquy_state').all() as Row[],
    'ON CONFLICT (key) DO NOTHING',
  );
  return report;
}

/** Inserts `rows` in batches; answers how many went in. */
async function insertAll(
  to: pg.Pool,
  table: string,
  columns: readonly string[],
  rows: Row[],
  conflict: string,
): Promise<number> {
  let inserted = 0;
  for (let i = 0; i < rows.length; i += BATCH) {
    const result = await insertRows(to, table, columns, rows.slice(i, i + BATCH), conflict);
    inserted += result.rowCount ?? 0;
  }
  return inserted;
}

const JSON_COLUMNS = new Set(['metadata', 'sources', 'attachments']);

function insertRows(
  to: pg.Pool,
  table: string,
  columns: readonly string[],
  rows: Row[],
  conflict: string,
): Promise<pg.QueryResult<Row>> {
  const values: unknown[] = [];
  const tuples = rows.map((row) => {
    const slots = columns.map((column) => {
      const value = row[column] ?? null;
      values.push(
        JSON_COLUMNS.has(column) && typeof value === 'string' ? storableJson(value) : value,
      );
      return `$${values.length}`;
    });
    return `(${slots.join(', ')})`;
  });
  return to.query<Row>(
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')} ${conflict}`,
    withoutNul(values),
  );
}
