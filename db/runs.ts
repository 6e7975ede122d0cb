import type { AgentRun, RunStatus } from '../src/runs.js';

// The rows of `agent_runs` both SQL stores read (the same columns in SQLite and Postgres), and
// the run they answer.

/** Every run status, for a query that names none. */
export const ALL_STATUSES: readonly RunStatus[] = [
  'pending',
  'running',
  'answered',
  'failed',
  'expired',
  'unconfirmed',
];

/** Runs with how far each one's reply went (the same SQL in both dialects); a WHERE follows. */
export const SELECT_RUNS = `SELECT r.*, m.conversation_id AS reply_conversation_id,
    m.delivery AS reply_delivery, m.platform_message_id AS reply_platform_id,
    m.metadata AS reply_metadata
  FROM agent_runs r LEFT JOIN messages m ON m.id = r.reply_id`;

/** A row of `agent_runs` as SQL returns it (`SELECT *`). */
export interface RunSqlRow {
  id: string;
  message_id: string;
  conversation_id: string;
  agent_id: string;
  status: RunStatus;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  model: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  reply_id: string | null;
  error: string | null;
  attempts: number;
  prompt: string | null;
}

/** A run with how far its reply went (joined from `messages`). */
export interface RunRow extends RunSqlRow {
  reply_conversation_id: string | null;
  reply_delivery: 'sending' | 'sent' | 'unconfirmed' | 'failed' | null;
  reply_platform_id: string | null;
  reply_metadata: string | null;
}

/** A run as the store answers it, from its row (SQLite's or Postgres's). */
export function toRun(row: RunRow): AgentRun {
  return {
    id: row.id,
    messageId: row.message_id,
    conversationId: row.conversation_id,
    agentId: row.agent_id,
    status: row.status,
    createdAt: row.created_at,
    ...(row.started_at !== null && { startedAt: row.started_at }),
    ...(row.finished_at !== null && { finishedAt: row.finished_at }),
    ...(row.model !== null && { model: row.model }),
    ...(row.input_tokens !== null && { inputTokens: row.input_tokens }),
    ...(row.output_tokens !== null && { outputTokens: row.output_tokens }),
    ...(row.reply_id !== null && { replyId: row.reply_id }),
    ...(row.error !== null && { error: row.error }),
    attempts: row.attempts,
    ...(row.prompt !== null && { prompt: row.prompt }),
    ...(row.reply_conversation_id !== null && {
      reply: {
        conversationId: row.reply_conversation_id,
        ...(row.reply_delivery !== null && { delivery: row.reply_delivery }),
        messageIds: platformIds(row.reply_platform_id, row.reply_metadata),
      },
    }),
  };
}

/** A reply's platform ids: its own, then `metadata.partMessageIds`. */
function platformIds(first: string | null, metadata: string | null): string[] {
  if (first === null) return [];
  try {
    const parts = (JSON.parse(metadata ?? '{}') as { partMessageIds?: unknown }).partMessageIds;
    return [first, ...(Array.isArray(parts) ? parts.map(String) : [])];
  } catch {
    return [first];
  }
}
