import { StoreError } from '../src/errors.js';
import type { ConversationSummary } from '../src/store.js';

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
