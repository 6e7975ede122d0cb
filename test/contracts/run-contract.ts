import { describe, expect, it } from 'vitest';
import type { AgentRun, RunStatus } from '../../src/runs.js';
import type { ConversationStore } from '../../src/store.js';
import { commitRuns, run } from './lease-contract.js';

/**
 * What every store with a run ledger (`commit` and `getRuns`) keeps of a run written more than
 * once: a later write never loses what an earlier one set, and a finished run stays finished
 * when a write from before it finished lands late (an instance that lost the conversation's
 * lease, a batch retried after the run ended). Called from the store contract; a store without
 * a run ledger has nothing to keep.
 *
 * @example
 * ```ts
 * describeRunContract(() => store);
 * ```
 */
export function describeRunContract(store: () => ConversationStore): void {
  describe('agent runs', () => {
    /** Writes `runs` one commit each, in order, as the bot writes a run while it goes. */
    async function write(...runs: AgentRun[]) {
      for (const written of runs) {
        const [result] = await store().commit!([{ kind: 'run', run: written }]);
        expect(result?.ok).toBe(true);
      }
    }
    /** The one run answering turn `messageId`. */
    const read = async (messageId: string) => {
      const [found] = await store().getRuns!({ messageId });
      return found;
    };

    it.each<[RunStatus, RunStatus]>([
      ['answered', 'running'],
      ['failed', 'running'],
      ['expired', 'pending'],
      ['unconfirmed', 'running'],
    ])('keeps a run %s when a %s write of it lands late', async (finished, late) => {
      if (store().commit === undefined) return expect(store().getRuns).toBeUndefined();
      const pending = run('c-late', `m-${finished}`, 'pending');
      await commitRuns(store(), [pending]);
      const running = { ...pending, status: 'running' as const, startedAt: at(1), attempts: 1 };
      const ended = { ...running, status: finished, finishedAt: at(2), error: 'why it ended' };
      await write(running, ended, { ...running, status: late });
      expect(await read(pending.messageId)).toMatchObject({
        status: finished,
        startedAt: at(1),
        finishedAt: at(2),
        error: 'why it ended',
        attempts: 1,
      });
    });

    it('moves an unfinished run on, and a finished one to another end', async () => {
      if (store().commit === undefined) return expect(store().getRuns).toBeUndefined();
      const pending = run('c-on', 'm-on', 'pending');
      await commitRuns(store(), [pending]);
      const running = { ...pending, status: 'running' as const, startedAt: at(1), attempts: 1 };
      await write(running);
      expect(await read(pending.messageId)).toMatchObject({ status: 'running', startedAt: at(1) });
      await write({ ...running, status: 'answered', finishedAt: at(2), model: 'gpt' });
      await write({ ...running, status: 'unconfirmed', finishedAt: at(3), error: 'not confirmed' });
      expect(await read(pending.messageId)).toMatchObject({
        status: 'unconfirmed',
        finishedAt: at(3),
        error: 'not confirmed',
        model: 'gpt',
      });
    });

    it("reads a conversation's runs in the states asked for, oldest first", async () => {
      if (store().commit === undefined) return expect(store().getRuns).toBeUndefined();
      await commitRuns(store(), [
        run('c-drain', 'm-drain-1', 'pending'),
        run('c-beside', 'm-drain-2', 'pending'),
        run('c-drain', 'm-drain-3', 'answered'),
        run('c-drain', 'm-drain-4', 'running'),
      ]);
      const ids = (runs: AgentRun[]) => runs.map((r) => r.messageId);
      const statuses: RunStatus[] = ['pending', 'running'];
      expect(ids(await store().getRuns!({ conversationId: 'c-drain', statuses }))).toEqual([
        'm-drain-1',
        'm-drain-4',
      ]);
      expect(ids(await store().getRuns!({ conversationId: 'c-drain' }))).toEqual([
        'm-drain-1',
        'm-drain-3',
        'm-drain-4',
      ]);
    });
  });
}

function at(seconds: number): string {
  return new Date(Date.UTC(2026, 0, 2, 0, 0, seconds)).toISOString();
}
