/**
 * The loop guard's depth of an inbound turn: how many agent turns in a row it ends, counted in
 * the store, so that two bots on different platforms cannot bounce forever.
 */
import { StoreError } from '../errors.js';
import type { ColloquyError } from '../errors.js';
import type { ConversationStore } from '../store.js';
import type { NewMessage } from '../types.js';
import { trailingAgentRun } from './turn.js';

/** Most rows the loop guard reads back through, however many tool rows there are. */
const LOOP_GUARD_MAX_ROWS = 5000;

/** What the depth is read with. */
export interface DepthDeps {
  store: ConversationStore;
  maxAgentDepth: number;
  answerBots: boolean;
  report(error: ColloquyError): void;
}

/**
 * A person's turn starts at depth 0. Another bot's turn is as deep as the run of agent turns
 * it ends, counted in the store; when the store cannot say, `maxAgentDepth` (not answered).
 *
 * @example
 * ```ts
 * const depth = await inboundDepth({ store, maxAgentDepth: 5, answerBots: true, report }, turn);
 * ```
 */
export async function inboundDepth(deps: DepthDeps, message: NewMessage): Promise<number> {
  if (message.participant.kind !== 'agent' || !deps.answerBots) return 0;
  const { maxAgentDepth } = deps;
  try {
    // Tool rows do not count but fill the window: read further back until the run ends.
    for (let limit = maxAgentDepth * 4 + 4; ; limit *= 4) {
      const rows = await deps.store.get(message.conversationId, { limit });
      const run = trailingAgentRun(rows.filter((turn) => turn.id !== message.id));
      const whole = run.ended || rows.length < limit || limit >= LOOP_GUARD_MAX_ROWS;
      if (whole || run.count >= maxAgentDepth) return run.count + 1;
    }
  } catch (cause) {
    deps.report(
      new StoreError('could not read the conversation for the loop guard', {
        cause,
        conversationId: message.conversationId,
        messageId: message.id,
      }),
    );
    return maxAgentDepth;
  }
}
