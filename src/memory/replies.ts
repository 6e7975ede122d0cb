import type { ReplyConfirmation } from '../runs.js';
import { searchKeys } from '../search-words.js';
import { normalizeTimestamp } from '../timestamp.js';
import { type Conversation, type Row, insertSorted, span } from './rows.js';

/**
 * Writes a reply's confirmation into its row: the platform's ids, its delivery, what it
 * carried, and its final text and time (the row moves in `conversation` when its time does).
 * True when the row gained its platform message id, which the caller then indexes.
 */
export function confirmRow(
  row: Row,
  confirmation: ReplyConfirmation,
  conversation: Conversation | undefined,
): boolean {
  const { messageIds, delivery, metadata, traceId, sources, attachments } = confirmation;
  const [first, ...rest] = messageIds;
  const meta = row.message.metadata;
  const identified = first !== undefined && meta.messageId === undefined;
  if (identified) meta.messageId = first;
  if (rest.length > 0) meta.partMessageIds = rest;
  Object.assign(meta, metadata);
  row.message.delivery = delivery;
  if (traceId !== undefined) row.message.traceId = traceId;
  if (sources?.length) row.message.sources = [...sources];
  if (attachments?.length) row.message.attachments = [...attachments];
  else if (attachments !== undefined) delete row.message.attachments;
  if (confirmation.content !== undefined) {
    row.message.content = confirmation.content;
    row.words = searchKeys(confirmation.content);
  }
  const at = confirmation.timestamp === undefined ? -1 : (conversation?.rows.indexOf(row) ?? -1);
  if (confirmation.timestamp !== undefined && conversation !== undefined && at >= 0) {
    conversation.rows.splice(at, 1);
    row.message.timestamp = normalizeTimestamp(confirmation.timestamp, 'timestamp');
    insertSorted(conversation.rows, row);
    // The conversation spans its turns as they now stand, as in SQLite.
    span(conversation);
  }
  return identified;
}
