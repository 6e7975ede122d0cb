import type { CliDb } from './database.js';
import { CliError } from './errors.js';
import { visible } from './visible.js';

/** One turn as `tail` shows it. */
export interface TranscriptLine {
  seq: number;
  timestamp: string;
  conversationId: string;
  speaker: string;
  kind: string;
  content: string;
  editedAt: string | null;
  deletedAt: string | null;
}

/**
 * Reads the `transcript` view (one readable row per turn, summaries left out). The filter
 * is only there when a conversation is asked for, so SQLite can use its index then.
 */
function select(conversation: string | undefined, where: string[]): string {
  const filters =
    conversation === undefined ? where : ['conversation_id = @conversation', ...where];
  return `select seq, timestamp, conversation_id as "conversationId", speaker,
    speaker_kind as kind, text as content, edited_at as "editedAt", deleted_at as "deletedAt"
    from transcript ${filters.length === 0 ? '' : `where ${filters.join(' and ')}`}`;
}

/** The newest `limit` turns (of one conversation, or all), oldest first. */
export async function newestTurns(
  db: CliDb,
  conversation: string | undefined,
  limit: number,
): Promise<TranscriptLine[]> {
  const rows = await db.all<TranscriptLine>(
    `${select(conversation, [])} order by seq desc limit @limit`,
    { ...params(conversation), limit },
  );
  return rows.reverse();
}

/** Turns stored after sequence `afterSeq`, oldest first (at most `limit`). */
export function turnsAfter(
  db: CliDb,
  conversation: string | undefined,
  afterSeq: number,
  limit = 1000,
): Promise<TranscriptLine[]> {
  return db.all<TranscriptLine>(
    `${select(conversation, ['seq > @afterSeq'])} order by seq limit @limit`,
    { ...params(conversation), afterSeq, limit },
  );
}

/** Where a Postgres follower is: every turn before `(txid, seq)` has been read. */
export interface CommitCursor {
  txid: string;
  seq: number;
}

/** The cursor of a follower starting now: transactions still open may commit later. */
export async function commitCursorNow(db: CliDb): Promise<CommitCursor> {
  const [row] = await db.all<{ txid: string }>(
    'select pg_snapshot_xmin(pg_current_snapshot())::text as txid',
  );
  return { txid: row!.txid, seq: 0 };
}

/**
 * Postgres: turns committed after `cursor`, in commit-safe order. A sequence number is taken
 * when a turn is inserted, not when it commits, so a plain `seq` cursor would skip a turn whose
 * transaction commits after a later one's; this reads by writing transaction and only below the
 * oldest transaction still open, so a late commit is read when it lands.
 */
export async function turnsCommittedAfter(
  db: CliDb,
  conversation: string | undefined,
  cursor: CommitCursor,
  limit = 1000,
): Promise<(TranscriptLine & CommitCursor)[]> {
  const only = conversation === undefined ? '' : 'and m.conversation_id = @conversation';
  return db.all<TranscriptLine & CommitCursor>(
    `select m.txid::text as txid, m.seq, m.timestamp, m.conversation_id as "conversationId",
       coalesce(p.display_name, m.participant_id) as speaker, p.kind, m.content,
       m.edited_at as "editedAt", m.deleted_at as "deletedAt"
     from messages m join participants p on p.id = m.participant_id
     where not m.is_summary ${only}
       and (m.txid, m.seq) > (cast(@txid as xid8), cast(@seq as bigint))
       and m.txid < pg_snapshot_xmin(pg_current_snapshot())
     order by m.txid, m.seq limit @limit`,
    { ...params(conversation), txid: cursor.txid, seq: cursor.seq, limit },
  );
}

type Params = Record<string, string | number>;

function params(conversation: string | undefined): Params {
  return conversation === undefined ? {} : { conversation };
}

/** `time  conversation  speaker (kind): text`, on one line, control characters escaped. */
export function formatTurn(turn: TranscriptLine): string {
  const text = turn.content.replace(/\r?\n/g, ' ↵ ').replace(/\t/g, ' ');
  const marks = `${turn.deletedAt ? '[deleted] ' : ''}${turn.editedAt ? '[edited] ' : ''}`;
  return visible(
    `${turn.timestamp}  ${turn.conversationId}  ${turn.speaker} (${turn.kind}): ${marks}${text}`,
  );
}

/** Fails with one clear line when the conversation is not in the database. */
export async function assertConversationExists(db: CliDb, id: string): Promise<void> {
  const found = await db.all('select 1 from conversations where id = @id', { id });
  if (found.length === 0) {
    throw new CliError(`no conversation ${id} (list them with: colloquy conversations)`);
  }
}
