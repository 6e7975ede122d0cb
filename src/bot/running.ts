/**
 * What the parts of a started bot share (intake, the drain, the bot itself): the store and
 * what it can do, capture, the runner, and the bot's error handler.
 */
import type { Agent } from '../agent.js';
import type { Capture } from '../capture.js';
import type { Channel } from '../channel.js';
import type { Logger } from '../logger.js';
import type { ConversationStore, RunLedger, StoreOperation } from '../store.js';
import type { BotOptions } from './options.js';
import type { TurnRunner } from './runner.js';
import type { SettleDeps } from './settle.js';
import type { ConversationLeases } from './shared.js';

/** A started bot, as its parts see it. */
export interface Running {
  readonly options: BotOptions;
  readonly store: ConversationStore;
  /** The store's run ledger; undefined for a store without one (turns answered as they come). */
  readonly ledger: RunLedger | undefined;
  /** The conversation leases, when the store is shared with other instances. */
  readonly leases: ConversationLeases | undefined;
  readonly capture: Capture;
  readonly runner: TurnRunner;
  readonly settling: SettleDeps;
  readonly logger: Logger;
  /** Aborted when `stop` begins: a turn waiting for its conversation's lease gives up. */
  readonly stopping: AbortSignal;
  agentsOn(channel: Channel): readonly Agent[];
  report(error: unknown): void;
  /** Runs `work` as in flight (`idle` and `stop` wait for it); never rejects. See `InFlight`. */
  track(work: () => Promise<void>, counted?: boolean): Promise<void>;
  /** Commits one write through capture, waiting out passing failures. */
  write(op: StoreOperation): Promise<unknown>;
}
