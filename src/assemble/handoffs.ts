import { StoreError } from '../errors.js';
import type { NewMessage, StoredMessage } from '../types.js';
import type { Context } from './load.js';

/**
 * The turns with those of every hand-off addressed to the agent merged in, in conversation
 * order: a turn that mentions one of `aliases` and names `metadata.handoffTurns` (the turn
 * that started the hand-off, the handing agents' tool rows) brings those turns of this
 * conversation along, read by id: nothing else of the conversation comes with them. `handed`
 * holds their ids: another agent's tool rows among them are shown.
 */
export async function withHandoffs(
  ctx: Context,
  turns: StoredMessage[],
  current: NewMessage | undefined,
  aliases: ReadonlySet<string>,
): Promise<{ turns: StoredMessage[]; handed: ReadonlySet<string> }> {
  const handed = new Set<string>();
  for (const turn of current === undefined ? turns : [...turns, current]) {
    const ids: unknown = turn.metadata.handoffTurns;
    if (!Array.isArray(ids) || !(turn.metadata.mentions ?? []).some((id) => aliases.has(id))) {
      continue;
    }
    for (const id of ids) if (typeof id === 'string') handed.add(id);
  }
  const loaded = new Set(turns.map((turn) => turn.id));
  const missing = [...handed].filter((id) => !loaded.has(id));
  if (missing.length === 0) return { turns, handed };
  try {
    const found = (await readByIds(ctx, missing)).filter((turn) => turn.deletedAt === undefined);
    return { turns: [...turns, ...found].sort(inConversationOrder), handed };
  } catch (cause) {
    ctx.report(
      new StoreError('Could not load the turns of a hand-off', {
        cause,
        conversationId: ctx.conversationId,
      }),
    );
    return { turns, handed };
  }
}

async function readByIds(ctx: Context, ids: readonly string[]): Promise<StoredMessage[]> {
  const { store, conversationId } = ctx;
  const found = await Promise.all(ids.map((id) => store.getMessage(conversationId, id)));
  return found.filter((turn): turn is StoredMessage => turn !== undefined);
}

/** The order stores return a conversation's turns in: by time, then by sequence. */
function inConversationOrder(a: StoredMessage, b: StoredMessage): number {
  if (a.timestamp !== b.timestamp) return a.timestamp < b.timestamp ? -1 : 1;
  return (a.sequence ?? 0) - (b.sequence ?? 0);
}
