import {
  type ClaimedRuns,
  type Lease,
  checkLeaseName,
  checkLeaseTtl,
  leaseNames,
  newLeaseToken,
} from '../leases.js';
import type { AgentRun } from '../runs.js';

/** The in-memory store's leases: held in this process only. */
export class MemoryLeases {
  readonly #leases = new Map<string, Lease>();

  /** Takes `name` when free or expired, or extends it for its holder. */
  acquire(name: string, holder: string, ttlMs: number): Lease | undefined {
    checkLeaseName(name, holder);
    checkLeaseTtl(ttlMs);
    return this.#take(name, holder, ttlMs, true);
  }

  renew(lease: Lease, ttlMs: number): Lease | undefined {
    checkLeaseTtl(ttlMs);
    const held = this.#leases.get(lease.name);
    if (held === undefined || held.token !== lease.token) return undefined;
    const renewed = { ...held, expiresAt: new Date(Date.now() + ttlMs).toISOString() };
    this.#leases.set(lease.name, renewed);
    return { ...renewed };
  }

  release(lease: Lease): void {
    if (this.#leases.get(lease.name)?.token === lease.token) this.#leases.delete(lease.name);
  }

  /** Takes each conversation of `unfinished` whose lease is free or expired, with its runs. */
  claim(unfinished: AgentRun[], holder: string, ttlMs: number): ClaimedRuns[] {
    checkLeaseName('claimUnfinishedRuns', holder);
    checkLeaseTtl(ttlMs);
    const claimed: ClaimedRuns[] = [];
    for (const conversationId of new Set(unfinished.map((run) => run.conversationId))) {
      const lease = this.#take(leaseNames.conversation(conversationId), holder, ttlMs, false);
      if (lease === undefined) continue;
      claimed.push({ lease, runs: unfinished.filter((r) => r.conversationId === conversationId) });
    }
    return claimed;
  }

  /** The lease when free or expired (or already `holder`'s, when `extend`); else undefined. */
  #take(name: string, holder: string, ttlMs: number, extend: boolean): Lease | undefined {
    const now = Date.now();
    const held = this.#leases.get(name);
    const free = held === undefined || Date.parse(held.expiresAt) <= now;
    if (!free && !(extend && held.holder === holder)) return undefined;
    const token = held?.holder === holder ? held.token : newLeaseToken();
    const lease = { name, holder, token, expiresAt: new Date(now + ttlMs).toISOString() };
    this.#leases.set(name, lease);
    return { ...lease };
  }
}
