import { StoreError } from '../errors.js';
import type { FlowOperation } from '../runs.js';
import type { CommitResult, ConversationLog, StoreOperation } from '../store.js';

/** The log's calls the memory store commits through. */
type LoggedCalls = Pick<
  ConversationLog,
  'append' | 'recordEdit' | 'recordDeletion' | 'recordReaction'
>;

/**
 * Applies `ops` in order, each failing alone; one result per op. Turns, edits, deletions and
 * reactions go through the store's public calls (a subclass or a test may wrap them), the
 * agents' work through `flow`.
 *
 * @example
 * ```ts
 * return commitInOrder(this, ops, (op) => this.#applyFlow(op));
 * ```
 */
export async function commitInOrder(
  store: LoggedCalls,
  ops: readonly StoreOperation[],
  flow: (op: FlowOperation) => unknown,
): Promise<CommitResult[]> {
  const results: CommitResult[] = [];
  for (const op of ops) {
    try {
      results.push({ ok: true, value: await applyOne(store, op, flow) } as CommitResult);
    } catch (cause) {
      const error =
        cause instanceof StoreError
          ? cause
          : new StoreError(`could not store ${op.kind}: ${String(cause)}`, {
              cause,
              transient: false,
            });
      results.push({ ok: false, error });
    }
  }
  return results;
}

async function applyOne(
  store: LoggedCalls,
  op: StoreOperation,
  flow: (op: FlowOperation) => unknown,
): Promise<unknown> {
  switch (op.kind) {
    case 'append':
      return store.append(op.message);
    case 'edit':
      return store.recordEdit(op.edit);
    case 'delete':
      return store.recordDeletion(op.deletion);
    case 'reaction':
      return store.recordReaction(op.change);
    default:
      return flow(op);
  }
}
