import type { SelectedMessageRow } from '../sqlite/index.js';
import type { CliDb } from './database.js';
import type { StoredMessage } from '../../src/types.js';

/** An earlier text of an edited turn. */
export interface ExportedRevision {
  content: string;
  replacedAt: string;
}

/** One line of `colloquy export --format jsonl`: a StoredMessage plus its earlier texts. */
export type ExportedMessage = StoredMessage & { revisions?: ExportedRevision[] };

/** The store's row plus the edited turn's earlier texts, as a JSON array (null when none). */
type ExportRow = SelectedMessageRow & { revisions: string | null };

/** Only there when a conversation is asked for, so SQLite can use its index then. */
const where = (conversation: string | undefined) =>
  conversation === undefined ? '' : 'where m.conversation_id = @conversation';
const params = (conversation: string | undefined): Record<string, string> =>
  conversation === undefined ? {} : { conversation };

const select = (columns: string, conversation: string | undefined) => `
select ${columns},
  (select json_group_array(json_object('content', r.content, 'replacedAt', r.replaced_at))
    from (select content, replaced_at from message_revisions
          where message_seq = m.seq order by id) r
    having count(*) > 0) as revisions
from messages m
join participants p on p.id = m.participant_id
${where(conversation)}
order by m.seq`;

/** How many messages an export will write. */
export async function countMessages(db: CliDb, conversation: string | undefined): Promise<number> {
  const [row] = await db.all<{ n: number }>(
    `select count(*) as n from messages m ${where(conversation)}`,
    params(conversation),
  );
  return row?.n ?? 0;
}

/** Postgres: the edited turn's earlier texts, as a JSON array (null when none). */
const PG_REVISIONS = `(select json_agg(json_build_object('content', r.content,
    'replacedAt', to_char(r.replaced_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
    order by r.id) from message_revisions r where r.message_seq = m.seq) as revisions`;

/** Rows a Postgres export reads at a time. */
const PG_PAGE = 1000;

/**
 * Every message (of one conversation, or all) in sequence order, mapped by the store's own
 * `toMessage`, with flat memory: SQLite reads one row at a time with `.iterate()`, Postgres a
 * page of rows at a time by sequence. The mapping is loaded through `colloquy/sqlite`, like
 * the store.
 */
export async function iterateMessages(
  db: CliDb,
  conversation: string | undefined,
): Promise<AsyncIterable<ExportedMessage> | Iterable<ExportedMessage>> {
  const { MESSAGE_COLUMNS, fromValues, toMessage } = await import('../sqlite/index.js');
  if (db.sqlite !== undefined) {
    const statement = db.sqlite.prepare<Record<string, string>, ExportRow>(
      select(MESSAGE_COLUMNS, conversation),
    );
    return withRevisions(statement.iterate(params(conversation)), toMessage);
  }
  const { PG_MESSAGE_COLUMNS } = await import('../postgres/index.js');
  const only = conversation === undefined ? '' : 'and m.conversation_id = @conversation';
  const sql = `select ${PG_MESSAGE_COLUMNS}, ${PG_REVISIONS}
    from messages m join participants p on p.id = m.participant_id
    where m.seq > @after ${only} order by m.seq limit ${PG_PAGE}`;
  return (async function* pages() {
    let after = 0;
    for (;;) {
      const rows = await db.raw(sql, { ...params(conversation), after });
      const batch = rows.map((values) => {
        const row = fromValues(values) as ExportRow;
        row.revisions = (values[values.length - 1] as string | null) ?? null;
        return row;
      });
      yield* withRevisions(batch, toMessage);
      const last = batch.at(-1);
      if (last === undefined || batch.length < PG_PAGE) return;
      after = last.seq;
    }
  })();
}

function* withRevisions(
  rows: Iterable<ExportRow>,
  toMessage: (row: SelectedMessageRow) => StoredMessage,
): Generator<ExportedMessage> {
  for (const row of rows) {
    const message: ExportedMessage = toMessage(row);
    if (row.revisions !== null) message.revisions = JSON.parse(row.revisions) as ExportedRevision[];
    yield message;
  }
}
