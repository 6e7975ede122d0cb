import { StoreError } from '../src/errors.js';
import type { ConversationSummary, ListConversationsOptions, Page } from '../src/store.js';
import { LIMIT } from './queries.js';

/**
 * A `conversations` row as `SELECT *` reads it, in either dialect (Postgres answers its
 * timestamps as ISO strings and its `metadata` as JSON text, as SQLite stores them).
 */
export interface ConversationRow {
  id: string;
  channel_type: string;
  channel_id: string;
  channel_name: string | null;
  thread_id: string | null;
  scope: ConversationSummary['scope'];
  created_at: string;
  last_message_at: string;
  message_count: number;
  /** SQLite only: the conversation's number in the search index. */
  number?: number;
  title: string | null;
  metadata: string | null;
}

/** A conversation as the stores answer it, from its row. */
export function toSummary(row: ConversationRow): ConversationSummary {
  return {
    id: row.id,
    channelType: row.channel_type,
    channelId: row.channel_id,
    ...(row.channel_name === null ? {} : { channelName: row.channel_name }),
    ...(row.thread_id === null ? {} : { threadId: row.thread_id }),
    scope: row.scope,
    messageCount: row.message_count,
    firstMessageAt: row.created_at,
    lastMessageAt: row.last_message_at,
    ...(row.title === null ? {} : { title: row.title }),
    ...(row.metadata === null
      ? {}
      : { metadata: JSON.parse(row.metadata) as Record<string, unknown> }),
  };
}

/** The cursor of `listConversations`: where the next page starts. */
export function encodeCursor(lastMessageAt: string, id: string): string {
  return Buffer.from(JSON.stringify([lastMessageAt, id]), 'utf8').toString('base64url');
}

/** A cursor back into its key, or a StoreError for anything else. */
export function decodeCursor(cursor: string): [string, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === 'string')) {
      return [value[0] as string, value[1] as string];
    }
  } catch {
    // fall through to the error below
  }
  throw new StoreError(`not a listConversations cursor: ${JSON.stringify(cursor)}`);
}

/** Who wrote where, read from the turns (an index on their authors). */
const FROM_TURNS = {
  wroteIn:
    'EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.participant_id = @participant)',
  agentWroteIn: `c.id IN (SELECT m.conversation_id FROM messages m
      JOIN participants p ON p.id = m.participant_id
      WHERE m.participant_id = @agent AND p.kind = 'agent')`,
};

/**
 * The SQL of `listConversations` (`@name` parameters), newest activity first; `before` is the
 * dialect's "row before the cursor" test on `(c.last_message_at, c.id)`. It asks for one row
 * more than a page, so `pageOf` knows whether another page follows. `authored` is the
 * dialect's "@participant wrote a turn in c" and "agent @agent wrote a turn in c".
 *
 * @example
 * ```ts
 * listingQuery({ limit: 20 }, '(c.last_message_at, c.id) < (@cursorLast, @cursorId)');
 * ```
 */
export function listingQuery(
  options: ListConversationsOptions,
  before: string,
  authored: { wroteIn: string; agentWroteIn: string } = FROM_TURNS,
): { sql: string; params: Record<string, string | number>; limit: number } {
  const limit = Math.max(1, Math.floor(options.limit ?? 50));
  const params: Record<string, string | number> = { limit: limit + 1 };
  const where: string[] = [];
  if (options.channelType !== undefined) {
    where.push('c.channel_type = @channelType');
    params.channelType = options.channelType;
  }
  if (options.participantId !== undefined) {
    where.push(authored.wroteIn);
    params.participant = options.participantId;
  }
  if (options.agentId !== undefined) {
    where.push(authored.agentWroteIn);
    params.agent = options.agentId;
  }
  params.offset = Math.max(0, Math.floor(options.offset ?? 0));
  if (options.cursor !== undefined) {
    const [last, id] = decodeCursor(options.cursor);
    where.push(before);
    params.cursorLast = last;
    params.cursorId = id;
  }
  const sql = `SELECT * FROM conversations c ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY c.last_message_at DESC, c.id DESC ${LIMIT} OFFSET CAST(@offset AS INTEGER)`;
  return { sql, params, limit };
}

/** A page of `listingQuery`'s rows, with the cursor of the next when there is one. */
export function pageOf(rows: ConversationRow[], limit: number): Page<ConversationSummary> {
  const items = rows.slice(0, limit).map(toSummary);
  const last = items[items.length - 1];
  return rows.length > limit && last !== undefined
    ? { items, nextCursor: encodeCursor(last.lastMessageAt, last.id) }
    : { items };
}
