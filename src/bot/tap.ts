import type { ConversationStore } from '../store.js';
import type { MessageDeletion, MessageEdit, NewMessage, StoredMessage } from '../types.js';

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
 * The store capture writes through: every member is the store's own, except that while
 * `listening()` is true, after a write that changed something (a new turn, a known turn
 * edited or deleted) it awaits `changed` before resolving. Capture therefore counts a write
 * as done only once the listeners (copies into agents' own stores, `History` subscribers)
 * have run. While no one listens, writes are the store's own calls, untouched.
 */
export function tapStore(
  store: ConversationStore,
  listening: () => boolean,
  changed: (change: CapturedChange) => Promise<void>,
): ConversationStore {
  const append: ConversationStore['append'] = (message: NewMessage, options) => {
    const written = store.append(message, options);
    if (!listening()) return written;
    return written.then(async (result) => {
      if (result.inserted) await changed({ kind: 'append', message: result.message });
      return result;
    });
  };
  const recordEdit: ConversationStore['recordEdit'] = (edit) => {
    const written = store.recordEdit(edit);
    if (!listening()) return written;
    return written.then(async (known) => {
      if (known) await changed({ kind: 'edit', edit });
      return known;
    });
  };
  const recordDeletion: ConversationStore['recordDeletion'] = (deletion) => {
    const written = store.recordDeletion(deletion);
    if (!listening()) return written;
    return written.then(async (known) => {
      if (known) await changed({ kind: 'delete', deletion });
      return known;
    });
  };
  const own: Record<PropertyKey, unknown> = { append, recordEdit, recordDeletion };
  return new Proxy(store, {
    get(target, key) {
      if (key in own) return own[key];
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

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
