import type { NewMessage } from '../../src/types.js';
import { refusedUse, usesOf } from '../../src/uses.js';
import { withoutNul } from './errors.js';
import type { Queryable } from './runs.js';

/**
 * Records that press `$2` used the buttons of the message with colloquy id `$1`, unless a press
 * did already, and answers the press that used them. A second instance's press waits here for
 * the first one's transaction, then reads the row it committed (`DO UPDATE` returns it).
 */
const TAKE_USE = `INSERT INTO used_messages (message_seq, press_id)
    SELECT seq, $2 FROM messages WHERE id = $1
  ON CONFLICT (message_seq) DO UPDATE SET press_id = used_messages.press_id
  RETURNING press_id`;

/** The pending runs of a press refused (created with it, before its turn was written). */
const DROP_RUNS = `DELETE FROM agent_runs WHERE message_id = $1 AND status = 'pending'`;

/**
 * `message` as the transaction stores it: a press that uses a message's `once` buttons takes
 * that use (`used_messages`), or, when another press took it first, is stored refused `used`
 * (`refusedUse`) with no runs. Called after the transaction's locks (which create its runs).
 *
 * @example
 * ```ts
 * const stored = await recordUse(client, press);
 * ```
 */
export async function recordUse(db: Queryable, message: NewMessage): Promise<NewMessage> {
  const uses = usesOf(message);
  if (uses === undefined) return message;
  const [usesId, pressId] = withoutNul([uses, message.id]) as [string, string];
  const { rows } = await db.query<{ press_id: string }>(TAKE_USE, [usesId, pressId]);
  if ((rows[0]?.press_id ?? pressId) === pressId) return message;
  await db.query(DROP_RUNS, [pressId]);
  return refusedUse(message);
}
