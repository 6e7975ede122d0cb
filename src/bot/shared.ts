import { type Lease, leaseNames, newLeaseHolder } from '../leases.js';

import type { ClaimedRuns } from '../leases.js';
import type { ConversationLog, Leasing, RunLedger } from '../store.js';

/**
 * How a bot shares its store with other instances of itself (`BotOptions.shared`).
 *
 * @example
 * ```ts
 * const shared: SharedOptions = { leaseTtlMs: 30_000 };
 * ```
 */
export interface SharedOptions {
  /**
   * How long a conversation's lease lasts unless renewed (renewed every third of it while
   * its agents work): how long the conversation waits when its instance dies. Default 30 000.
   */
  leaseTtlMs?: number;
  /** How often unfinished work nobody holds (a dead instance's) is looked for. Default: the ttl. */
  claimEveryMs?: number;
}

/** A lease while it is held: `lost` once a renewal found it taken by another instance. */
export interface HeldLease {
  readonly lease: Lease;
  readonly lost: boolean;
}

/**
 * The conversation leases of one bot instance: one agent run at a time per conversation
 * across every instance on the store. A lease is taken before a conversation's agents run,
 * renewed while they work and released after; another instance waits for it (or takes it
 * once it expires, when its holder died).
 *
 * @example
 * ```ts
 * const leases = new ConversationLeases(store, { leaseTtlMs: 30_000 }, signal);
 * await leases.hold('telegram:42', async (held) => { …answer, unless held.lost… });
 * ```
 */
export class ConversationLeases {
  /** This process, as the holder of its leases. */
  readonly holder = newLeaseHolder();
  readonly ttlMs: number;
  readonly claimEveryMs: number;

  constructor(
    private readonly store: ConversationLog & RunLedger & Leasing,
    options: SharedOptions,
    private readonly signal: AbortSignal,
  ) {
    this.ttlMs = options.leaseTtlMs ?? 30_000;
    this.claimEveryMs = options.claimEveryMs ?? this.ttlMs;
  }

  /**
   * Runs `work` holding the conversation's lease, waiting for it while another instance holds
   * it. Undefined, without running `work`, when the bot stops while another instance holds
   * it: a stopping bot still answers what it was handed in a conversation nobody else holds.
   */
  async hold<T>(
    conversationId: string,
    work: (held: HeldLease) => Promise<T>,
  ): Promise<T | undefined> {
    const name = leaseNames.conversation(conversationId);
    let wait = 20;
    for (;;) {
      const lease = await this.store.acquireLease(name, this.holder, this.ttlMs);
      if (lease !== undefined) return this.#holding(lease, work);
      if (this.signal.aborted) return undefined;
      await sleep(wait, this.signal);
      wait = Math.min(wait * 2, Math.max(50, this.ttlMs / 4));
    }
  }

  /**
   * Runs `work` on a lease already taken (`claimUnfinishedRuns`), renewing it, then releases
   * it. Undefined, without running `work`, when the lease ran out before the work could start
   * (it waited behind this instance's other work in the conversation) and another took it.
   */
  async holding<T>(taken: Lease, work: (held: HeldLease) => Promise<T>): Promise<T | undefined> {
    const lease = await this.store.renewLease(taken, this.ttlMs).catch(() => undefined);
    return lease === undefined ? undefined : this.#holding(lease, work);
  }

  /** Runs `work` holding `lease`, renewing it every third of the ttl, then releases it. */
  async #holding<T>(lease: Lease, work: (held: HeldLease) => Promise<T>): Promise<T> {
    const held = { lease, lost: false };
    const renew = setInterval(() => {
      this.store.renewLease(held.lease, this.ttlMs).then(
        (renewed) => {
          if (renewed === undefined) held.lost = true;
          else held.lease = renewed;
        },
        // A failed renewal is tried again at the next tick; the lease lasts until its expiry.
        () => {},
      );
    }, this.ttlMs / 3);
    renew.unref();
    try {
      return await work(held);
    } finally {
      clearInterval(renew);
      if (!held.lost) await this.store.releaseLease(held.lease).catch(() => {});
    }
  }

  /**
   * Runs `work` each time this instance holds the role `name` (a lease renewed every third of
   * its ttl), until `signal` aborts; a standby tries every quarter of the ttl, so it takes over
   * within the ttl when the holder dies. `work`'s signal aborts when the lease is lost; when
   * `work` ends (or fails, reported) the role is released and sought again.
   */
  async lead(
    name: string,
    work: (signal: AbortSignal) => Promise<void>,
    signal: AbortSignal,
    report: (error: unknown) => void,
  ): Promise<void> {
    while (!signal.aborted) {
      let lease: Lease | undefined;
      try {
        lease = await this.store.acquireLease(name, this.holder, this.ttlMs);
      } catch (error) {
        report(error);
      }
      if (lease === undefined) {
        await sleep(this.ttlMs / 4, signal);
        continue;
      }
      // Stopped while the lease was being taken: an aborted signal tells no listener, so the
      // work would never be told to end. The lease is given back unused.
      if (signal.aborted) {
        await this.release(lease);
        break;
      }
      const term = new AbortController();
      const stop = () => term.abort();
      signal.addEventListener('abort', stop, { once: true });
      let held: Lease = lease;
      const renew = setInterval(() => {
        this.store.renewLease(held, this.ttlMs).then(
          (renewed) => (renewed === undefined ? term.abort() : (held = renewed)),
          () => {},
        );
      }, this.ttlMs / 3);
      try {
        await work(term.signal);
      } catch (error) {
        report(error);
        await sleep(this.ttlMs / 4, signal);
      } finally {
        clearInterval(renew);
        signal.removeEventListener('abort', stop);
        await this.store.releaseLease(held).catch(() => {});
      }
    }
  }

  /** Gives up a lease this instance took and will not use; a failure leaves it to expire. */
  async release(lease: Lease): Promise<void> {
    await this.store.releaseLease(lease).catch(() => {});
  }

  /** The conversations with unfinished runs that nobody holds, each with its lease taken. */
  async claim(): Promise<ClaimedRuns[]> {
    return this.store.claimUnfinishedRuns(this.holder, this.ttlMs);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
