import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConversationStore, NewMessage, StoreOperation } from 'colloquy';
import type { AgentRun } from '../../src/runs.js';

type LeasedStore = ConversationStore &
  Required<
    Pick<ConversationStore, 'acquireLease' | 'renewLease' | 'releaseLease' | 'claimUnfinishedRuns'>
  >;

/**
 * Leases (`acquireLease` / `renewLease` / `releaseLease`) and `claimUnfinishedRuns`, for every
 * store that offers them. Each test opens a fresh, empty store.
 *
 * @example
 * ```ts
 * describeLeaseContract('InMemoryConversationStore', () => new InMemoryConversationStore());
 * ```
 */
export function describeLeaseContract(
  name: string,
  open: () => Promise<LeasedStore> | LeasedStore,
  cleanup?: (store: LeasedStore) => Promise<void>,
): void {
  describe(`Lease contract: ${name}`, () => {
    let store: LeasedStore;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      if (cleanup) await cleanup(store);
      else await store.close?.();
    });

    it('gives a free lease to one holder, and extends it for that holder only', async () => {
      const first = await store.acquireLease('conversation:c1', 'a', 30_000);
      expect(first).toMatchObject({ name: 'conversation:c1', holder: 'a' });
      expect(await store.acquireLease('conversation:c1', 'b', 30_000)).toBeUndefined();
      const again = await store.acquireLease('conversation:c1', 'a', 60_000);
      expect(again?.token).toBe(first?.token);
      expect(Date.parse(again!.expiresAt)).toBeGreaterThanOrEqual(Date.parse(first!.expiresAt));
      expect(await store.acquireLease('conversation:c2', 'b', 30_000)).toMatchObject({
        holder: 'b',
      });
    });

    it('renews and releases by token; a holder whose lease was taken can do neither', async () => {
      const lease = (await store.acquireLease('poller', 'a', 30_000))!;
      const renewed = await store.renewLease(lease, 60_000);
      expect(renewed?.token).toBe(lease.token);
      await store.releaseLease(lease);
      const taken = (await store.acquireLease('poller', 'b', 30_000))!;
      expect(taken.token).not.toBe(lease.token);
      expect(await store.renewLease(lease, 30_000)).toBeUndefined();
      await store.releaseLease(lease); // stale: changes nothing
      expect(await store.acquireLease('poller', 'a', 30_000)).toBeUndefined();
      expect(await store.renewLease(taken, 30_000)).toMatchObject({ holder: 'b' });
    });

    it('lets another holder take a lease its holder stopped renewing', async () => {
      const lease = (await store.acquireLease('discord-shard:1:0', 'a', 30))!;
      await sleep(60);
      const taken = await store.acquireLease('discord-shard:1:0', 'b', 30_000);
      expect(taken).toMatchObject({ holder: 'b' });
      expect(taken?.token).not.toBe(lease.token);
      expect(await store.renewLease(lease, 30_000)).toBeUndefined();
    });

    it('refuses a lease without a holder or with a ttl that is not a positive whole number', async () => {
      await expect(store.acquireLease('x', '', 1000)).rejects.toThrow(/holder/);
      await expect(store.acquireLease('x', 'a', 0)).rejects.toThrow(/ttlMs/);
      await expect(store.acquireLease('x', 'a', 1.5)).rejects.toThrow(/ttlMs/);
    });

    it("hands each conversation's unfinished runs to one holder, with the conversation's lease", async () => {
      await commitRuns(store, [
        run('c1', 'm1', 'pending'),
        run('c1', 'm2', 'running'),
        run('c2', 'm3', 'pending'),
        run('c3', 'm4', 'answered'),
        run('c4', 'm5', 'pending'),
      ]);
      await store.acquireLease('conversation:c4', 'busy', 30_000); // someone is on c4

      const claimed = await store.claimUnfinishedRuns('a', 30_000);
      const byConversation = Object.fromEntries(
        claimed.map(({ lease, runs }) => [lease.name, runs.map((r) => r.messageId)]),
      );
      expect(byConversation).toEqual({
        'conversation:c1': ['m1', 'm2'],
        'conversation:c2': ['m3'],
      });
      expect(claimed.every(({ lease }) => lease.holder === 'a')).toBe(true);
      expect(await store.claimUnfinishedRuns('b', 30_000)).toEqual([]);

      await store.releaseLease(claimed.find(({ lease }) => lease.name.endsWith('c2'))!.lease);
      const next = await store.claimUnfinishedRuns('b', 30_000);
      expect(next.map(({ lease }) => [lease.name, lease.holder])).toEqual([
        ['conversation:c2', 'b'],
      ]);
    });
  });
}

/** Writes run rows (and the turns they answer) the way the bot does, through `commit`. */
export async function commitRuns(store: ConversationStore, runs: AgentRun[]): Promise<void> {
  const ops: StoreOperation[] = runs.flatMap((r) => [
    { kind: 'append', message: turnFor(r) },
    { kind: 'run', run: r, create: true },
  ]);
  const results = await store.commit!(ops);
  expect(results.every((result) => result.ok)).toBe(true);
}

let created = 0;
/** A run of agent `agent-1` answering turn `messageId` in conversation `conversationId`. */
export function run(
  conversationId: string,
  messageId: string,
  status: AgentRun['status'],
): AgentRun {
  created++;
  return {
    id: `${messageId}:agent-1`,
    messageId,
    conversationId,
    agentId: 'agent-1',
    status,
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, created)).toISOString(),
    attempts: status === 'pending' ? 0 : 1,
  };
}

function turnFor(r: AgentRun): NewMessage {
  return {
    id: r.messageId,
    conversationId: r.conversationId,
    participant: { kind: 'user', id: 'telegram:u1', displayName: 'Ada' },
    content: `question ${r.messageId}`,
    timestamp: r.createdAt,
    scope: 'dm',
    metadata: { channelType: 'telegram', channelId: r.conversationId, messageId: r.messageId },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
