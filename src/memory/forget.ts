import { forgetLinks } from '../conversations.js';
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
