import type { ConversationSummary } from '../store.js';

/** What a page of conversations is ordered and resumed by. */
export type CursorKey = Pick<ConversationSummary, 'id' | 'lastMessageAt'>;

/** Newest activity first, ties by id from the end, as the SQLite and Redis stores list. */
export function newestActivityFirst(a: CursorKey, b: CursorKey): number {
  if (a.lastMessageAt !== b.lastMessageAt) return a.lastMessageAt > b.lastMessageAt ? -1 : 1;
  return a.id > b.id ? -1 : a.id < b.id ? 1 : 0;
}

export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify([key.lastMessageAt, key.id])).toString('base64url');
}

export function decodeCursor(cursor: string): CursorKey | undefined {
  try {
    const [lastMessageAt, id] = JSON.parse(
      Buffer.from(cursor, 'base64url').toString(),
    ) as unknown[];
    if (typeof lastMessageAt === 'string' && typeof id === 'string') return { id, lastMessageAt };
  } catch {
    // An unreadable cursor starts from the beginning.
  }
  return undefined;
}
