import type Database from 'better-sqlite3';
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
  return `select seq, timestamp, conversation_id as conversationId, speaker,
    speaker_kind as kind, text as content, edited_at as editedAt, deleted_at as deletedAt
    from transcript ${filters.length === 0 ? '' : `where ${filters.join(' and ')}`}`;
}

/** The newest `limit` turns (of one conversation, or all), oldest first. */
export function newestTurns(
  db: Database.Database,
  conversation: string | undefined,
  limit: number,
): TranscriptLine[] {
  const rows = db
    .prepare<Params, TranscriptLine>(`${select(conversation, [])} order by seq desc limit @limit`)
    .all({ ...params(conversation), limit });
  return rows.reverse();
}

/** Turns stored after sequence `afterSeq`, oldest first (at most `limit`). */
export function turnsAfter(
  db: Database.Database,
  conversation: string | undefined,
  afterSeq: number,
  limit = 1000,
): TranscriptLine[] {
  return db
    .prepare<Params, TranscriptLine>(
      `${select(conversation, ['seq > @afterSeq'])} order by seq limit @limit`,
    )
    .all({ ...params(conversation), afterSeq, limit });
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
export function assertConversationExists(db: Database.Database, id: string): void {
  const found = db.prepare('select 1 from conversations where id = ?').get(id);
  if (found === undefined) {
    throw new CliError(`no conversation ${id} (list them with: colloquy conversations)`);
  }
}
