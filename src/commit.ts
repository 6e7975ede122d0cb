import { StoreError, mayPass, messageOf } from './errors.js';
import type {
  CommitResult,
  ConversationLog,
  OperationResults,
  RunLedger,
  StoreOperation,
} from './store.js';

/**
 * Commits `ops` through the store's run ledger or, for a store without one, the log's calls one
 * by one. Never rejects: whatever goes wrong is a failed result per op (transient unless the
 * store says otherwise). A log's `append` that resolves to nothing counts as stored.
 *
 * @example
 * ```ts
 * const { ledger } = capabilitiesOf(store);
 * const [result] = await commitWith(store, ledger, [{ kind: 'append', message: turn }]);
 * ```
 */
export async function commitWith(
  store: ConversationLog,
  ledger: RunLedger | undefined,
  ops: readonly StoreOperation[],
): Promise<CommitResult[]> {
  try {
    if (ledger !== undefined) {
      const results = await ledger.commit(ops);
      if (Array.isArray(results) && results.length === ops.length) {
        return results.map((result, i) =>
          result?.ok === true ? result : failure(ops[i]!, result?.error),
        );
      }
      throw new Error(`commit answered ${String(results?.length)} results for ${ops.length} ops`);
    }
  } catch (cause) {
    return ops.map((op) => failure(op, cause));
  }
  const results: CommitResult[] = [];
  for (const op of ops) {
    try {
      results.push({ ok: true, value: await applyOne(store, op) } as CommitResult);
    } catch (cause) {
      const failed = failure(op, cause);
      results.push(failed);
      // What follows may depend on it (an edit of the turn): it waits behind, in order.
      if (failed.ok === false && failed.error.transient !== false) {
        const behind = errorFor(op, `held behind a failed write: ${failed.error.message}`, true);
        for (const later of ops.slice(results.length)) results.push(failure(later, behind));
        break;
      }
    }
  }
  return results;
}

async function applyOne(store: ConversationLog, op: StoreOperation): Promise<unknown> {
  switch (op.kind) {
    case 'append': {
      const result = (await store.append(op.message)) as
        Partial<OperationResults['append']> | undefined;
      return {
        message: result?.message ?? op.message,
        inserted: typeof result?.inserted === 'boolean' ? result.inserted : true,
      };
    }
    case 'edit':
      return (await store.recordEdit(op.edit)) !== false;
    case 'delete':
      return (await store.recordDeletion(op.deletion)) !== false;
    case 'reaction':
      return (await store.recordReaction(op.change)) !== false;
    // A store without `commit` keeps no outbox: its reply is a plain turn, appended once it
    // went out, with the platform's ids and time (as the confirmation that ends a send says).
    case 'reply':
      return { message: op.message, inserted: true };
    case 'confirm': {
      const { turn } = op.confirmation;
      if (turn === undefined) return false;
      await applyOne(store, { kind: 'append', message: turn });
      return true;
    }
    case 'run':
    case 'state':
      return undefined;
  }
}

function failure(op: StoreOperation, cause: unknown): CommitResult {
  const transient = mayPass(cause);
  const error =
    cause instanceof StoreError
      ? cause
      : errorFor(op, `cannot store ${op.kind}: ${messageOf(cause)}`, transient, cause);
  return { ok: false, error };
}

/** A StoreError naming the op's turn, with `cause`. */
export function errorFor(
  op: StoreOperation,
  message: string,
  transient: boolean,
  cause?: unknown,
): StoreError {
  const ids =
    op.kind === 'append' || op.kind === 'reply'
      ? { conversationId: op.message.conversationId, messageId: op.message.id }
      : op.kind === 'run'
        ? { conversationId: op.run.conversationId, messageId: op.run.messageId }
        : {};
  return new StoreError(message, { ...ids, cause, transient });
}
