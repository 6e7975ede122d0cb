/**
 * Builds a started bot's parts on its store: capture, the runner, the leases when the store
 * is shared, intake, the drain and the posts the bot starts. The store's capabilities are read
 * here, once.
 */
import type { Agent } from '../agent.js';
import { Capture } from '../capture.js';
import type { Channel } from '../channel.js';
import { ColloquyError } from '../errors.js';
import { interactionsInterceptor } from '../interactions.js';
import type { Logger } from '../logger.js';
import { capabilitiesOf } from '../store.js';
import type {
  CapturedChange,
  ConversationStore,
  StoreCapabilities,
  StoreOperation,
} from '../store.js';
import { Bursts } from './bursts.js';
import type { BurstOption } from './bursts.js';
import { Drain } from './drain.js';
import type { InFlight } from './inflight.js';
import { Intake } from './intake.js';
import { deadLetterPathOf, leaseOptionsFromEnv, promptBytes } from './options.js';
import type { BotOptions } from './options.js';
import { Posts } from './posts.js';
import { TurnRunner } from './runner.js';
import type { Running } from './running.js';
import { settling } from './settle.js';
import { ConversationLeases } from './shared.js';
import type { SharedOptions } from './shared.js';
import { writeCommitted } from './write.js';

/** What the parts need from the bot. */
export interface PartsDeps {
  options: BotOptions;
  logger: Logger;
  /** `BotOptions.shared`, or the default of the store the bot opened. */
  shared: boolean | SharedOptions;
  inflight: InFlight;
  /** Aborted when stop begins. */
  stopping: AbortSignal;
  /** Aborted once stop has waited for the work in flight. */
  aborted: AbortSignal;
  report(error: unknown): void;
  /** A write capture committed (see `CaptureOptions.committed`). */
  committed(change: CapturedChange): Promise<void> | undefined;
  storeFor(agent: Agent): ConversationStore;
  agentsOn(channel: Channel): readonly Agent[];
  aliasesOf(agent: Agent): readonly string[];
  burstOption(agentId: string, channelType: string | undefined): BurstOption;
}

/** A started bot's parts. */
export type Parts = Running & { intake: Intake; drain: Drain; posts: Posts };

/**
 * The parts of a bot on `store`. Throws when the bot is to share a store without leases; warns
 * once when the store keeps no run ledger (turns are then answered as they come).
 *
 * @example
 * ```ts
 * const parts = botParts(store, deps);
 * await parts.drain.recover();
 * ```
 */
export function botParts(store: ConversationStore, deps: PartsDeps): Parts {
  const { options, logger, report } = deps;
  const capabilities = capabilitiesOf(store);
  if (capabilities.ledger === undefined) {
    logger.warn(
      'the store keeps no run ledger: turns are answered as they come, and work a stop ' +
        'interrupts is not resumed',
    );
  }
  const leases = leasesFor(deps.shared, capabilities.leasing, deps.stopping);
  const capture = new Capture(store, {
    logger,
    deadLetterPath: deadLetterPathOf(store),
    committed: (change) => deps.committed(change),
    ...options.capture,
    onError: (error) => {
      options.capture?.onError?.(error);
      report(error);
    },
  });
  const write = (op: StoreOperation) => writeCommitted(capture, op, deps.stopping);
  const track = (work: () => Promise<void>, counted?: boolean) =>
    deps.inflight.track(work, counted);
  const runner = new TurnRunner({
    store,
    storeFor: deps.storeFor,
    interceptors: options.interceptors ?? [],
    interactions: interactionsInterceptor(options.commands, {
      recordEdit: (edit) => intake.commit({ kind: 'edit', edit }),
      report,
    }),
    sendHooks: options.sendHooks ?? [],
    agentsOn: deps.agentsOn,
    aliasesOf: deps.aliasesOf,
    identities: () => options.channels.flatMap((c) => c.botIdentity ?? []),
    logger,
    report,
    maxAgentDepth: options.maxAgentDepth ?? 5,
    answerBots: options.answerBots ?? false,
    signal: deps.aborted,
    bursts: new Bursts(
      (agentId, turn) => deps.burstOption(agentId, turn.metadata.channelType),
      deps.aborted,
    ),
    write,
    track: (work) => void track(() => work),
    ...promptBytes(options.recordPrompts),
  });
  const running: Running = {
    options,
    store,
    ledger: capabilities.ledger,
    leases,
    capture,
    runner,
    settling: settling(options.channels, options.unconfirmedReplies, {
      store,
      write,
      report,
      logger,
    }),
    logger,
    stopping: deps.stopping,
    agentsOn: deps.agentsOn,
    report,
    track,
    write,
  };
  const drain = new Drain(running);
  const intake = new Intake(running, drain, (limit) => deps.inflight.capacity(limit));
  const posts = new Posts({
    channels: options.channels,
    store,
    queue: capabilities.posts,
    write,
    sendHooks: options.sendHooks ?? [],
    unconfirmed: options.unconfirmedReplies,
    shared: leases !== undefined,
    ...(leases !== undefined && { claimTtlMs: leases.ttlMs }),
    report,
    track,
  });
  return { ...running, intake, drain, posts };
}

/** The conversation leases when the store is shared (`BotOptions.shared`). */
function leasesFor(
  shared: boolean | SharedOptions,
  leasing: StoreCapabilities['leasing'],
  stopping: AbortSignal,
): ConversationLeases | undefined {
  if (shared === false) return undefined;
  if (leasing === undefined) {
    throw new ColloquyError(
      'BotOptions.shared needs a store with leases and agent runs (a run ledger and ' +
        'leasing: SQLite, Postgres or in-memory); this store lacks them',
    );
  }
  // `true` (given, or the default for Postgres) takes its settings from the environment.
  const settings = shared === true ? leaseOptionsFromEnv() : shared;
  return new ConversationLeases(leasing, settings, stopping);
}
