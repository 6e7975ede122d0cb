import { ColloquyError, StoreError } from '../errors.js';
import type { CapturedChange, ConversationStore } from '../store.js';

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

/**
 * Tells the other stores and the watchers a change capture committed: copied into every
 * agent's own store (before it resolves, so the agent's next read holds it), then told to the
 * watchers (`History`). Never throws: a copy that fails is reported and the capture stands.
 */
export async function tellChange(
  change: CapturedChange,
  stores: readonly ConversationStore[],
  watchers: Iterable<(change: CapturedChange) => void>,
  report: (error: ColloquyError) => void,
): Promise<void> {
  const where =
    change.kind === 'append'
      ? { conversationId: change.message.conversationId, messageId: change.message.id }
      : {};
  await Promise.all(
    stores.map((store) =>
      applyChange(store, change).catch((cause: unknown) =>
        report(
          new StoreError("could not copy a captured turn into an agent's own store", {
            cause,
            ...where,
          }),
        ),
      ),
    ),
  );
  for (const watcher of watchers) {
    try {
      watcher(change);
    } catch (cause) {
      report(new ColloquyError('a capture watcher threw', { cause }));
    }
  }
}
