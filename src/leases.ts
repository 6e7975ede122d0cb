import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { AgentRun } from './runs.js';

/**
 * A lease on a name, held by one instance until `expiresAt` unless renewed: one agent run at a
 * time per conversation, one Telegram poller per token, one owner per Discord shard.
 * `token` changes whenever another holder takes the lease, so a holder that paused past the
 * expiry cannot renew or release what someone else now holds.
 *
 * @example
 * ```ts
 * const lease = await store.acquireLease?.(leaseNames.conversation('telegram:42'), 'host-a:4242', 30_000);
 * if (lease) {
 *   // …run the conversation's turns, renewing every 10 s…
 *   await store.releaseLease?.(lease);
 * }
 * ```
 */
export interface Lease {
  name: string;
  /** Who holds it: one id per process (host, pid and a random part). */
  holder: string;
  token: string;
  /** ISO 8601 UTC, on the database's clock. */
  expiresAt: string;
}

/** A conversation `claimUnfinishedRuns` handed over: its lease and its unfinished runs. */
export interface ClaimedRuns {
  lease: Lease;
  runs: AgentRun[];
}

/**
 * The lease names colloquy uses.
 *
 * @example
 * ```ts
 * leaseNames.conversation('telegram:42'); // 'conversation:telegram:42'
 * ```
 */
export const leaseNames = {
  conversation: (conversationId: string) => `conversation:${conversationId}`,
  telegramPoller: (botId: string) => `telegram-poller:${botId}`,
  discordShard: (applicationId: string, shard: number) => `discord-shard:${applicationId}:${shard}`,
};

/** The prefix of conversation lease names (`claimUnfinishedRuns` takes these). */
export const CONVERSATION_LEASE_PREFIX = 'conversation:';

/**
 * A holder id for this process: host, pid and a random part (a restarted process is a new
 * holder, so it never renews what its previous life held).
 *
 * @example
 * ```ts
 * const holder = newLeaseHolder(); // 'web-3:4242:9f2c…'
 * ```
 */
export function newLeaseHolder(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/** A fresh lease token. */
export function newLeaseToken(): string {
  return randomUUID();
}

/** Throws a one-line error unless `ttlMs` is a whole number of milliseconds above zero. */
export function checkLeaseTtl(ttlMs: number): void {
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw new RangeError(`a lease's ttlMs must be a whole number above 0, got ${String(ttlMs)}`);
  }
}

/** Throws a one-line error unless `name` and `holder` are non-empty strings. */
export function checkLeaseName(name: string, holder: string): void {
  if (typeof name !== 'string' || name === '') {
    throw new TypeError('a lease needs a non-empty name');
  }
  if (typeof holder !== 'string' || holder === '') {
    throw new TypeError(`lease ${name}: the holder must be a non-empty string`);
  }
}
