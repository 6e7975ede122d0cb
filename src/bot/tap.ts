import type { ConversationStore } from '../store.js';
import type { MessageDeletion, MessageEdit, StoredMessage } from '../types.js';

/**
 * One change capture committed to the bot's store: a new turn, an edit or a deletion.
 *
 * @example
 * ```ts
 * const change: CapturedChange = { kind: 'append', message: stored };
 * ```
 */
export type CapturedChange =
  | { kind: 'append'; message: StoredMessage }
  | { kind: 'edit'; edit: MessageEdit }
  | { kind: 'delete'; deletion: MessageDeletion };

/**
 * Applies a change to another store (an agent's own `conversationHistory`): the same turn,
 * edit or deletion, so that whatever store an agent reads holds what was captured.
 */
export async function applyChange(store: ConversationStore, change: CapturedChange) {
  if (change.kind === 'append') {
    const {
      sequence: _sequence,
      editedAt: _editedAt,
      deletedAt: _deletedAt,
      ...turn
    } = change.message;
    await store.append(turn);
  } else if (change.kind === 'edit') await store.recordEdit(change.edit);
  else await store.recordDeletion(change.deletion);
}
