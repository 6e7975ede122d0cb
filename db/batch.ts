import type { Answer, Call, SerializedError } from './writer-protocol.js';
import { serializeError } from './writer-protocol.js';
import { type StoreWrites, callWrite } from './writes.js';

/**
 * Commits the writer thread's calls together and answers each. They run in one transaction
 * without a savepoint each (`StoreWrites.together`). If anything fails once it has begun (a
 * call, the search indexing, COMMIT), nothing of it is kept and the calls run again, each in
 * a savepoint of its own, so that one call failing leaves the others written. If that
 * transaction is lost too (BEGIN or COMMIT fails, or an error such as a full disk rolls it
 * back), every call is answered with that error: none of them is stored.
 *
 * @example
 * ```ts
 * commitBatch(writes, [{ id: 1, name: 'deleteMessages', args: ['telegram:42', ['a']] }]);
 * // [{ id: 1, value: 1 }]
 * ```
 */
export function commitBatch(writes: StoreWrites, calls: Call[]): Answer[] {
  if (calls.length === 1) return calls.map((call) => answer(writes, call));
  let begun = false;
  try {
    return writes.together(() => {
      begun = true;
      return calls.map(({ id, name, args }) => ({ id, value: callWrite(writes, name, args) }));
    });
  } catch (error) {
    // No call ran: BEGIN failed (another process held the lock past the busy timeout), or
    // holding the search index back did. Nothing is stored, and trying again at once would
    // not help.
    if (!begun) return calls.map(({ id }) => ({ id, error: serializeError(error) }));
  }
  const answers: Answer[] = [];
  try {
    writes.db
      .transaction(() => {
        for (const call of calls) {
          const result = answer(writes, call);
          answers.push(result);
          // Some errors (a full disk, an I/O error) roll the whole transaction back: the
          // calls before are gone, and each one after would commit on its own.
          if ('error' in result && !writes.db.inTransaction) throw new Aborted(result.error);
        }
      })
      .immediate();
    return answers;
  } catch (error) {
    const reason = error instanceof Aborted ? error.reason : serializeError(error);
    return calls.map(({ id }) => ({ id, error: reason }));
  }
}

/** Thrown out of a batch whose transaction SQLite rolled back, with the error that did it. */
class Aborted {
  constructor(readonly reason: SerializedError) {}
}

function answer(writes: StoreWrites, { id, name, args }: Call): Answer {
  try {
    return { id, value: callWrite(writes, name, args) };
  } catch (error) {
    return { id, error: serializeError(error) };
  }
}
