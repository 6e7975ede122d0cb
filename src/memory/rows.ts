import type { MessageReaction } from '../reactions.js';
import { bm25 } from '../search-words.js';
import { PARTS_WITHIN, type ConversationSummary } from '../store.js';
import { normalizeTimestamp } from '../timestamp.js';
import type { NewMessage, PlatformMessageRef, StoredMessage } from '../types.js';

/** One stored turn with its search words and reactions. */
export interface Row {
  message: StoredMessage;
  words: string[];
  reactions?: MessageReaction[];
}

/** One conversation: what it says of itself, and its turns. */
export interface Conversation {
  info: Omit<ConversationSummary, 'messageCount'>;
  /** Sorted by timestamp, then sequence. */
  rows: Row[];
  /** Per message whose `once` buttons a press used (its id), the id of that press. */
  used: Map<string, string>;
}

/** A new conversation, as its first turn describes it. */
export function startedBy(message: StoredMessage): Conversation {
  const { metadata } = message;
  const info: Conversation['info'] = {
    id: message.conversationId,
    channelType: metadata.channelType,
    channelId: metadata.channelId,
    scope: message.scope,
    firstMessageAt: message.timestamp,
    lastMessageAt: message.timestamp,
  };
  if (metadata.channelName !== undefined) info.channelName = metadata.channelName;
  if (metadata.threadId !== undefined) info.threadId = metadata.threadId;
  return { info, rows: [], used: new Map() };
}

/** What the store answers about a conversation: a copy, with its turn count. */
export function summaryOf({ info, rows }: Conversation): ConversationSummary {
  return {
    ...info,
    ...(info.metadata === undefined ? {} : { metadata: structuredClone(info.metadata) }),
    messageCount: rows.length,
  };
}

/** Spans a conversation's times over the turns it holds; one left empty keeps its own. */
export function span({ info, rows }: Conversation): void {
  if (rows.length === 0) return;
  info.firstMessageAt = info.lastMessageAt = rows[0]!.message.timestamp;
  for (const { message } of rows) {
    if (message.timestamp < info.firstMessageAt) info.firstMessageAt = message.timestamp;
    if (message.timestamp > info.lastMessageAt) info.lastMessageAt = message.timestamp;
  }
}

export function optionalTimestamp(value: string | undefined, what: string): string | undefined {
  return value === undefined ? undefined : normalizeTimestamp(value, what);
}

/** Ranks the rows that contain any term by BM25 (`bm25`); ties go to the newest turn. */
export function rankBm25(rows: Row[], terms: string[]): Row[] {
  const found = new Map(terms.map((t) => [t, rows.filter((r) => r.words.includes(t)).length]));
  const scores = bm25(
    rows.map((r) => r.words),
    terms,
    rows.length,
    found,
  );
  return rows
    .map((row, i) => ({ row, score: scores[i]! }))
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || compareRows(b.row, a.row))
    .map((s) => s.row);
}

function compareRows(a: Row, b: Row): number {
  const x = a.message;
  const y = b.message;
  if (x.timestamp !== y.timestamp) return x.timestamp < y.timestamp ? -1 : 1;
  return (x.sequence ?? 0) - (y.sequence ?? 0);
}

/** Inserts keeping timestamp-then-sequence order; appends in order cost O(1). */
export function insertSorted(rows: Row[], row: Row): void {
  let index = rows.length;
  while (index > 0 && compareRows(rows[index - 1]!, row) > 0) index--;
  rows.splice(index, 0, row);
}

export function platformKey(ref: PlatformMessageRef): string {
  return JSON.stringify([ref.channelType, ref.channelId, ref.messageId]);
}

export function platformKeyOf(message: NewMessage): string {
  const { channelType, channelId, messageId } = message.metadata;
  return messageId === undefined ? '' : platformKey({ channelType, channelId, messageId });
}

/** Whether `row` is a reply split into parts one of whose later parts is `ref`. */
function hasPart({ message }: Row, ref: PlatformMessageRef): boolean {
  const { channelType, channelId, messageId, partMessageIds } = message.metadata;
  return (
    channelType === ref.channelType &&
    channelId === ref.channelId &&
    messageId !== undefined &&
    partMessageIds?.includes(ref.messageId) === true
  );
}

/**
 * The row of a reply split into parts one of whose later parts (`metadata.partMessageIds`) is
 * `ref`, among `rows`, newest (last) first; undefined when none is.
 */
export function partRow(rows: readonly Row[], ref: PlatformMessageRef): Row | undefined {
  for (let i = rows.length - 1; i >= 0; i--) {
    if (hasPart(rows[i]!, ref)) return rows[i];
  }
  return undefined;
}

/**
 * The store's newest `PARTS_WITHIN` turns, in the order they were stored (one per sequence):
 * where a later part of a split reply is looked for when no conversation is named, so that a
 * message the store does not have costs a bounded read. Rows the store has since let go stay
 * here until they fall out of the window; `partOf` skips them.
 *
 * @example
 * ```ts
 * const newest = new NewestRows();
 * newest.add(row);
 * newest.partOf(ref, (row) => byId.get(row.message.id) === row);
 * ```
 */
export class NewestRows {
  #rows: Row[] = [];

  add(row: Row): void {
    this.#rows.push(row);
    if (this.#rows.length >= 2 * PARTS_WITHIN) this.#rows = this.#rows.slice(-PARTS_WITHIN);
  }

  /** The newest stored row of the window that has `ref` among its later parts. */
  partOf(ref: PlatformMessageRef, stored: (row: Row) => boolean): Row | undefined {
    const rows = this.#rows;
    for (let i = rows.length - 1; i >= Math.max(0, rows.length - PARTS_WITHIN); i--) {
      if (hasPart(rows[i]!, ref) && stored(rows[i]!)) return rows[i];
    }
    return undefined;
  }
}
