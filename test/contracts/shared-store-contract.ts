import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConversationStore, NewMessage } from 'colloquy';
import { commitRuns, run } from './lease-contract.js';

type Shared = ConversationStore &
  Required<Pick<ConversationStore, 'acquireLease' | 'releaseLease' | 'claimUnfinishedRuns'>>;

/**
 * Two store instances on one database, as two bot instances share it: what one writes the
 * other reads at once, duplicates and leases are decided by the database, never twice.
 *
 * @example
 * ```ts
 * describeSharedStoreContract('SQLite file', () => [open(path), open(path)]);
 * ```
 */
export function describeSharedStoreContract(
  name: string,
  openTwo: () => Promise<[Shared, Shared]> | [Shared, Shared],
  /** Runs after both are closed (a shared server's tables emptied, say). */
  cleanup?: () => Promise<void>,
): void {
  describe(`Shared-store contract: ${name}`, () => {
    let a: Shared;
    let b: Shared;
    beforeEach(async () => {
      [a, b] = await openTwo();
    });
    afterEach(async () => {
      await a.close?.();
      await b.close?.();
      await cleanup?.();
    });

    it('stores a turn appended on both at once exactly once', async () => {
      const turns = Array.from({ length: 20 }, (_, i) => turn(i));
      const results = await Promise.all(turns.flatMap((t) => [a.append(t), b.append(t)]));
      expect(results.filter((r) => r.inserted)).toHaveLength(20);
      expect(await a.get('telegram:42', { limit: 100 })).toHaveLength(20);
    });

    it("reads the other instance's writes and forgets at once", async () => {
      await a.append(turn(1));
      expect((await b.get('telegram:42')).map((m) => m.id)).toEqual(['shared-1']);
      expect(await b.forgetParticipant('telegram:u1')).toBe(1);
      expect(await a.get('telegram:42')).toEqual([]);
    });

    it('gives a lease to one of the two, and to the other once released', async () => {
      const [x, y] = await Promise.all([
        a.acquireLease('telegram-poller:bot', 'a', 30_000),
        b.acquireLease('telegram-poller:bot', 'b', 30_000),
      ]);
      expect([x, y].filter((lease) => lease !== undefined)).toHaveLength(1);
      const winner = (x ?? y)!;
      const [mine, other] = winner.holder === 'a' ? [a, b] : [b, a];
      const loser = winner.holder === 'a' ? 'b' : 'a';
      expect(await other.acquireLease('telegram-poller:bot', loser, 30_000)).toBeUndefined();
      await mine.releaseLease(winner);
      expect(await other.acquireLease('telegram-poller:bot', loser, 30_000)).toMatchObject({
        holder: loser,
      });
    });

    it("hands each conversation's unfinished runs to exactly one of the two", async () => {
      await commitRuns(
        a,
        Array.from({ length: 10 }, (_, i) => run(`shared-c${i}`, `shared-m${i}`, 'pending')),
      );
      const [fromA, fromB] = await Promise.all([
        a.claimUnfinishedRuns('a', 30_000),
        b.claimUnfinishedRuns('b', 30_000),
      ]);
      const names = [...fromA, ...fromB].map(({ lease }) => lease.name).sort();
      expect(names).toEqual(
        Array.from({ length: 10 }, (_, i) => `conversation:shared-c${i}`).sort(),
      );
    });
  });
}

function turn(n: number): NewMessage {
  return {
    id: `shared-${n}`,
    conversationId: 'telegram:42',
    participant: { kind: 'user', id: 'telegram:u1', displayName: 'Ada' },
    content: `turn ${n}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    scope: 'dm',
    metadata: { channelType: 'telegram', channelId: '42', messageId: `${n}` },
  };
}
