import { forgetLinks } from '../conversations.js';
import type { StoredMessage } from '../types.js';
import type { Row } from './rows.js';

/**
 * What forgetting a person removes from the turns they keep or did not write: the reactions
 * they put on anyone's turns (those on their deleted turns go with the turns) and, as in
 * SQLite, unless their turns are kept redacted, the mentions of them and the reply links to
 * them.
 *
 * @example
 * ```ts
 * forgetTraces(conversations.values(), 'telegram:1001', false);
 * ```
 */
export function forgetTraces(
  conversations: Iterable<{ rows: Row[] }>,
  participantId: string,
  redact: boolean,
): void {
  for (const { rows } of conversations) {
    for (const row of rows) {
      if (row.reactions) {
        row.reactions = row.reactions.filter((r) => r.participantId !== participantId);
      }
      if (!redact) forgetLinks(row.message, participantId);
    }
  }
}

/**
 * The conversations that can retell a turn `theirs` holds: those it is in, and the threads
 * under it (`metadata.threadParent`: a thread is a conversation of its own).
 *
 * @example
 * ```ts
 * const theirs = (m: StoredMessage) => m.participant.id === 'slack:U1';
 * const touched = conversationsRetelling(conversations.values(), theirs);
 * ```
 */
export function conversationsRetelling<C extends { rows: Row[] }>(
  conversations: Iterable<C>,
  theirs: (message: StoredMessage) => boolean,
): C[] {
  const all = [...conversations];
  const parents = new Set<string>();
  for (const { rows } of all) {
    for (const { message: m } of rows) if (theirs(m)) parents.add(`${m.conversationId}\0${m.id}`);
  }
  return all.filter(({ rows }) =>
    rows.some(({ message }) => {
      const parent = message.metadata.threadParent;
      if (theirs(message)) return true;
      return parent !== undefined && parents.has(`${parent.conversationId}\0${parent.id}`);
    }),
  );
}
