import type Database from 'better-sqlite3';
import type { SelectedMessageRow } from 'colloquy/sqlite';
import type { StoredMessage } from '../types.js';

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
export function countMessages(db: Database.Database, conversation: string | undefined): number {
  const row = db
    .prepare<Record<string, string>, { n: number }>(
      `select count(*) as n from messages m ${where(conversation)}`,
    )
    .get(params(conversation));
  return row?.n ?? 0;
}

/**
 * Every message (of one conversation, or all) in sequence order, mapped by the store's own
 * `toMessage` and read one row at a time with `.iterate()` so memory stays flat however
 * large the database is. The mapping is loaded through `colloquy/sqlite`, like the store.
 */
export async function iterateMessages(
  db: Database.Database,
  conversation: string | undefined,
): Promise<Iterable<ExportedMessage>> {
  const { MESSAGE_COLUMNS, toMessage } = await import('colloquy/sqlite');
  const statement = db.prepare<Record<string, string>, ExportRow>(
    select(MESSAGE_COLUMNS, conversation),
  );
  return withRevisions(statement.iterate(params(conversation)), toMessage);
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
