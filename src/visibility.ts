/** Who may read a turn the bot showed to one person only (a Slack ephemeral post). */
import type { Participant, StoredMessage } from './types.js';

/**
 * False for a turn shown to one person only (`metadata.visibleTo`, their platform user id)
 * when `reader` is someone else, or no one in particular: such a turn goes into a prompt, or
 * a search an agent makes, only while it answers that person. Every other turn is true.
 *
 * @example
 * ```ts
 * const post = { ...turn, metadata: { channelType: 'slack', visibleTo: 'U1' } };
 * readableBy(post, { kind: 'user', id: 'slack:U1' }); // true
 * readableBy(post, { kind: 'user', id: 'slack:U2' }); // false
 * ```
 */
export function readableBy(
  turn: Pick<StoredMessage, 'metadata'>,
  reader: Pick<Participant, 'id'> | undefined,
): boolean {
  const { visibleTo, channelType } = turn.metadata;
  if (typeof visibleTo !== 'string') return true;
  if (reader === undefined) return false;
  return reader.id === visibleTo || reader.id === `${String(channelType)}:${visibleTo}`;
}
