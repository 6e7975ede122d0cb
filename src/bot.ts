import { captureReaction } from './bot/reactions.js';
import { reactToStored } from './reactions.js';
import type { Agent } from './agent.js';
import { Capture } from './capture.js';
import type { CaptureOptions } from './capture.js';
import type { Interceptor, SendHook } from './chain.js';
import type { Channel, ChannelHandlers, ChannelState, Delivery } from './channel.js';
import type { TurnContext } from './chain.js';
import { ColloquyError, StoreError } from './errors.js';
import { consoleLogger, logLevelProblem } from './logger.js';
import { installSignalHandlers } from './bot/signals.js';
import { startTimeoutOf, startWithin } from './bot/start.js';
import type { Logger } from './logger.js';
import { capabilitiesOf } from './store.js';
import type {
  AppendResult,
  CapturedChange,
  ConversationStore,
  RunLedger,
  StoreCapabilities,
  StoreOperation,
} from './store.js';
import type { MessageDeletion, MessageEdit, NewMessage } from './types.js';
import { TurnOrder, refKey } from './turn-order.js';
import { withAgentMentions } from './bot/turn.js';
import { TurnRunner } from './bot/runner.js';
import type { RunPlan } from './bot/runner.js';
import { isUnfinished } from './runs.js';
import type { AgentRun, RunStatus } from './runs.js';
import { tellChange } from './bot/tap.js';
import { stoppingController, writeCommitted } from './bot/write.js';
import { settleReply, settling } from './bot/settle.js';
import type { SettleDeps, UnconfirmedReplies } from './bot/settle.js';
import { Bursts } from './bot/bursts.js';
import type { BurstOption } from './bot/bursts.js';
import { History } from './history/history.js';
import type { HistoryOptions } from './history/history.js';
import { ConversationLeases, type HeldLease, type SharedOptions } from './bot/shared.js';
import {
  commandsProblem,
  interactionsInterceptor,
  RecentPresses,
  registerCommands,
  resolveInteraction,
} from './interactions.js';
import type { Command } from './interactions.js';
import { Posts } from './bot/posts.js';
import type { PostMessage, PostReceipt, SendPostOptions } from './posts.js';

/** A store a bot opened for itself, and whether other instances of the bot may share it. */
export interface DefaultStore {
  store: ConversationStore;
  shared: boolean;
}

let openDefaultStore: (() => Promise<DefaultStore>) | undefined;

/**
 * Sets how a bot given no `store` opens one. The `colloquy` entry point sets the store
 * `COLLOQUY_DB` names (SQLite, or Postgres for a `postgres://` URL); the core knows no store.
 *
 * @example
 * ```ts
 * setDefaultStore(async () => ({ store: new InMemoryConversationStore(), shared: false }));
 * ```
 */
export function setDefaultStore(open: () => Promise<DefaultStore>): void {
  openDefaultStore = open;
}
export { mentionsName, trailingAgentTurns, withAgentMentions } from './bot/turn.js';

/**
 * How a `Bot` is put together; only `channels` and `agents` are required.
 *
 * @example
 * ```ts
 * const options: BotOptions = { channels: [telegram], agents: [new SupportAgent()], startTimeoutMs: 30_000 };
 * ```
 */
export interface BotOptions {
  channels: readonly Channel[];
  /** Every agent on every channel, or a list per channel. */
  agents: readonly Agent[] | ReadonlyMap<Channel, readonly Agent[]>;
  /** Default: `SqliteConversationStore` at `COLLOQUY_DB` or `./colloquy.db`, opened by `start`. */
  store?: ConversationStore;
  /**
   * Slash commands: registered on the platforms that list them at start, and each invocation
   * answered by its `agent` or its `handler`; an undeclared command is answered with one line
   * (see `Command`).
   */
  commands?: readonly Command[];
  /** Run after capture and before the agents, in order. */
  interceptors?: readonly Interceptor<TurnContext>[];
  /** Wrap every reply before it is recorded and posted, in order (see `SendHook`). */
  sendHooks?: readonly SendHook[];
  logger?: Logger;
  /**
   * Capture's buffer and retry settings; its failures also go to `catch`. Its
   * `deadLetterPath` defaults to `<database file>.dead-letter.jsonl` for a store with a
   * `path` (the SQLite store); give one for another store.
   */
  capture?: CaptureOptions;
  /** Most agent turns in a row before agents stop answering each other (default 5). */
  maxAgentDepth?: number;
  /** Answer turns written by other bots (default false: they are only recorded). */
  answerBots?: boolean;
  /**
   * What agents do with a person's burst of turns (see `BurstMode`); an agent's own `bursts`
   * wins. Default: what the turn's channel declares (`Channel.bursts`), else `queue`.
   */
  bursts?: BurstOption;
  /** Run the agents again when a person edits a recent turn (default false). */
  rerunOnEdit?: boolean;
  /** How long `stop` waits for queued writes to reach the store (default 5000 ms). */
  flushTimeoutMs?: number;
  /**
   * How long `start` waits for the channels to connect before it rejects with why (default
   * `COLLOQUY_START_TIMEOUT_MS`, else 60 000 ms; `Infinity` waits as long as it takes).
   */
  startTimeoutMs?: number;
  /**
   * Keep each agent run's assembled prompt in `agent_runs.prompt` (JSON), for `colloquy
   * studio` and SQL. Off by default; `true` caps each at 64 KiB (a larger one is replaced by
   * its size).
   */
  recordPrompts?: boolean | { maxBytes?: number };
  /**
   * At start, agent work a crash or a stop interrupted is resumed when it was recorded less
   * than this long ago, and marked `expired` otherwise (default 600 000: 10 minutes).
   */
  resumeWithinMs?: number;
  /**
   * How many times an agent is started on one turn before a restart stops trying: a run still
   * unfinished after this many starts, each ended by the process stopping, is marked `failed`
   * instead of resumed, so a turn that brings the bot down is not taken up again on every
   * restart (default 3). A resumed run's start is committed before the agent runs; a first
   * start the bot went down before recording counts as one.
   */
  maxRunAttempts?: number;
  /**
   * A reply a crash left unconfirmed (recorded, the platform call made, its answer never
   * recorded) is settled exactly on a channel that can find it again (Slack, Discord). On one
   * that cannot (Telegram), it is left `unconfirmed` and never sent again (`'leave'`, the
   * default: at most once), or sent again (`'resend'`: at least once, a rare duplicate rather
   * than a missed answer).
   */
  unconfirmedReplies?: UnconfirmedReplies;
  /**
   * Several instances of this bot share the store (one Postgres database, or one SQLite file):
   * a conversation's agents run on one instance at a time, in turn order, under a lease, and
   * the unfinished work of an instance that died is taken up by another (docs/leases.md).
   * Needs a store with leases. Default: on when the bot opened a `postgres://` `COLLOQUY_DB`.
   */
  shared?: boolean | SharedOptions;
}

/**
 * The one error handler: every `ColloquyError` the bot meets goes here.
 *
 * @example
 * ```ts
 * const handler: ErrorHandler = (err) => console.error(err.name, err.conversationId, err.message);
 * bot.catch(handler);
 * ```
 */
export type ErrorHandler = (error: ColloquyError) => void | Promise<void>;

const RECENT_TURNS = 1000;

/**
 * The runtime: starts channels, commits every turn to the store (a channel's handler resolves
 * once its event is committed, so the channel can acknowledge it), runs each new inbound turn
 * through `[...interceptors, dispatch]` and sends the agents' answers, each committed too. On every
 * channel the turns of one conversation run one after another in the order they arrived
 * (an edit or deletion after the turn it changes); different conversations run concurrently.
 * Errors in a turn are reported to `catch` and never stop the bot, nor the turns after it.
 *
 * @example
 * ```ts
 * import { Bot } from 'colloquy';
 * import { ConsoleChannel } from 'colloquy/console';
 * const bot = new Bot({ channels: [new ConsoleChannel()], agents: [new SupportAgent()] });
 * bot.catch((err) => console.error(err.name, err.message));
 * bot.installSignalHandlers();
 * await bot.start();
 * ```
 */
export class Bot {
  readonly #options: BotOptions;
  readonly #logger: Logger;
  readonly #inflight = new Set<Promise<void>>();
  /** Callers of `capacity`, each waiting for fewer than `limit` events in flight. */
  #roomWaiters: { limit: number; resolve: () => void }[] = [];
  /** Turns handed over and not yet handled, by colloquy id: a redelivery joins the first. */
  readonly #handling = new Map<string, Promise<void>>();
  readonly #recent = new Map<string, { message: NewMessage; channel: Channel }>();
  readonly #presses = new RecentPresses();
  readonly #order = new TurnOrder((error) => this.report(error));
  /**
   * The order events are committed in: a turn a channel is still completing holds back the
   * later turns of its conversation (and changes of it), and nothing else.
   */
  readonly #intake = new TurnOrder((error) => this.report(error));
  readonly #abort = new AbortController();
  /** Aborted when `stop` begins: a turn waiting for its conversation's lease gives up. */
  readonly #stopping = stoppingController();
  /** The conversation leases, when the store is shared with other instances. */
  #leases: ConversationLeases | undefined;
  #sweeper: NodeJS.Timeout | undefined;
  #store: ConversationStore | undefined;
  /** What the store can do, read once at start. */
  #ledger: RunLedger | undefined;
  #ownsStore = false;
  /** Whether the store the bot opened for itself is shared by default (Postgres). */
  #sharedStore = false;
  #capture: Capture | undefined;
  readonly #watchers = new Set<(change: CapturedChange) => void>();
  #runner: TurnRunner | undefined;
  #settling: SettleDeps | undefined;
  #posts: Posts | undefined;
  #accepting = false;
  #started: Promise<void> | undefined;
  #stopped: Promise<void> | undefined;
  #handler: ErrorHandler;

  constructor(options: BotOptions) {
    const { maxRunAttempts } = options;
    if (maxRunAttempts !== undefined && !(Number.isInteger(maxRunAttempts) && maxRunAttempts >= 1))
      throw new ColloquyError(
        `BotOptions.maxRunAttempts must be a whole number, at least 1, not ${String(maxRunAttempts)}`,
      );
    this.#options = options;
    this.#logger = options.logger ?? consoleLogger;
    this.#store = options.store;
    this.#handler = (error) =>
      this.#logger.error(`${error.name}: ${error.message}`, {
        conversationId: error.conversationId,
        messageId: error.messageId,
        cause: error.cause,
      });
  }

  /** The store turns are committed to (opened by `start` when none was given). */
  get store(): ConversationStore {
    const store = this.#store;
    if (store === undefined) throw new ColloquyError('the bot has no store before start()');
    return store;
  }

  /**
   * Resolves once every write asked for so far has been tried (committed, or held for retry
   * while the store fails).
   *
   * @example
   * ```ts
   * await telegram.waitForSent(1);
   * await bot.settled();
   * db.prepare('SELECT count(*) FROM messages').pluck().get(); // 2
   * ```
   */
  async settled(): Promise<void> {
    await this.#capture?.settled();
  }

  /**
   * Resolves once every event handed to the bot so far has been handled: answered, or given up
   * on and reported (for instance in a test, after a delivery the store refused for good). A
   * turn whose commit capture is still retrying is answered once it is committed, so `idle`
   * waits for the store to come back (`stop` does not).
   *
   * @example
   * ```ts
   * await telegram.postWebhook(url, update, secret);
   * await bot.idle();
   * ```
   */
  async idle(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight]);
  }

  /** Capture's counters (committed, waiting, dead-lettered…), after `start`. */
  get captureStats(): Capture['stats'] | undefined {
    return this.#capture?.stats;
  }

  /** Writes given up on (refused for good by the store, or unwritten at stop). */
  get captureDeadLetters(): Capture['deadLetters'] {
    return this.#capture?.deadLetters ?? [];
  }

  /**
   * One conversation as a live `History` over the bot's store: its snapshot follows every
   * turn the bot captures (and, by polling, turns other processes write to a shared
   * database); `reset` and `restore` are refused while an agent answers in it. After `start`.
   *
   * @example
   * ```ts
   * const history = bot.history('telegram:42');
   * await history.ready;
   * history.subscribe(() => console.log(history.lastEntry()));
   * ```
   */
  history(conversationId: string, options: HistoryOptions = {}): History {
    return new History(this.store, conversationId, {
      ...options,
      changes: (listener) => {
        this.#watchers.add(listener);
        return () => void this.#watchers.delete(listener);
      },
      busy: () => this.#runner?.answering(conversationId) ?? false,
    });
  }

  /**
   * Adds the bot's reaction to a stored turn, through its channel, recorded in
   * `message_reactions`; rejects with one line for a turn the store does not have.
   *
   * @example
   * ```ts
   * await bot.react('telegram:1001', 'telegram:1001:7', '👍');
   * ```
   */
  react(conversationId: string, messageId: string, emoji: string): Promise<void> {
    return reactToStored(this.#options.channels, this.#store, conversationId, messageId, emoji);
  }

  /** Replaces the error handler (default: log it). */
  catch(handler: ErrorHandler): this {
    this.#handler = handler;
    return this;
  }

  /**
   * Sends an error to the handler (wrapped in a `ColloquyError` if it is not one); the handler
   * failing is logged, never thrown.
   *
   * @example
   * ```ts
   * bot.report(new MalformedEventError('unknown webhook payload'));
   * ```
   */
  report(error: unknown): void {
    const err =
      error instanceof ColloquyError
        ? error
        : new ColloquyError(error instanceof Error ? error.message : String(error), {
            cause: error,
          });
    const fallback = (cause: unknown) =>
      this.#logger.error('the error handler threw', { error: err, cause });
    try {
      void Promise.resolve(this.#handler(err)).catch(fallback);
    } catch (cause) {
      fallback(cause);
    }
  }

  /** The agents that answer on a channel. */
  agentsOn(channel: Channel): readonly Agent[] {
    const { agents } = this.#options;
    return isAgentMap(agents) ? (agents.get(channel) ?? []) : agents;
  }

  /** The burst mode of an agent: its own, else the bot's, else its channel's (else `queue`). */
  #burstOption(agentId: string, channelType: string | undefined): BurstOption {
    const agents = this.#options.channels.flatMap((channel) => this.agentsOn(channel));
    const agent = agents.find((a) => a.id === agentId);
    const channel = this.#options.channels.find((c) => c.type === channelType);
    return agent?.bursts ?? this.#options.bursts ?? channel?.bursts ?? 'queue';
  }

  /** Everything an agent is known by: id, name, its aliases and its channels' bot identities. */
  aliasesOf(agent: Agent): readonly string[] {
    const aliases = new Set([agent.id, agent.name, ...(agent.agentAliases ?? [])]);
    for (const channel of this.#options.channels) {
      // Read live: a channel may know its identity before `start` resolves.
      const identity = channel.botIdentity;
      if (identity === undefined || !this.agentsOn(channel).includes(agent)) continue;
      aliases.add(identity.id);
      if (identity.username !== undefined) {
        aliases.add(identity.username);
        aliases.add(`@${identity.username}`);
      }
    }
    return [...aliases];
  }

  /**
   * Opens the store if needed and starts every channel. Each channel's bot identity (known
   * once it has started) joins the aliases of the agents on it. Rejects with a `ColloquyError`
   * (its cause the channel's last error) when a channel has not started within
   * `startTimeoutMs`, once the bot has stopped again (every channel, the one still starting
   * too), so the process can exit with that one line.
   */
  start(): Promise<void> {
    this.#started ??= this.#start();
    return this.#started;
  }

  async #start(): Promise<void> {
    // Settings first: a bad one stops the start before any file is opened or platform called.
    const logLevel = this.#logger === consoleLogger ? logLevelProblem() : undefined;
    if (logLevel !== undefined) throw new ColloquyError(logLevel);
    const commandProblem = commandsProblem(
      this.#options.commands,
      this.#allAgents().map((a) => a.id),
    );
    if (commandProblem !== undefined) throw new ColloquyError(commandProblem);
    const startTimeout = startTimeoutOf(this.#options.startTimeoutMs);
    for (const agent of new Set(this.#allAgents())) agent.prepare?.();
    if (this.#store === undefined) {
      if (openDefaultStore === undefined) {
        throw new ColloquyError('no store: pass BotOptions.store, or import Bot from colloquy');
      }
      const opened = await openDefaultStore();
      this.#store = opened.store;
      this.#ownsStore = true;
      this.#sharedStore = opened.shared;
    }
    const capabilities = capabilitiesOf(this.#store);
    this.#ledger = capabilities.ledger;
    if (this.#ledger === undefined) {
      this.#logger.warn(
        'the store keeps no run ledger: turns are answered as they come, and work a stop ' +
          'interrupts is not resumed',
      );
    }
    this.#leases = this.#sharing(capabilities);
    const capture = new Capture(this.#store, {
      logger: this.#logger,
      deadLetterPath: deadLetterPathOf(this.#store),
      committed: (change) =>
        this.#watchers.size > 0 || this.#agentStores().length > 0
          ? this.#changed(change)
          : undefined,
      ...this.#options.capture,
      onError: (error) => {
        this.#options.capture?.onError?.(error);
        this.report(error);
      },
    });
    this.#capture = capture;
    this.#runner = new TurnRunner({
      store: this.#store,
      storeFor: (agent) => this.#storeFor(agent),
      interceptors: [
        interactionsInterceptor(this.#options.commands, {
          recordEdit: (edit) => this.#commit({ kind: 'edit', edit }),
          report: (error) => this.report(error),
        }),
        ...(this.#options.interceptors ?? []),
      ],
      sendHooks: this.#options.sendHooks ?? [],
      agentsOn: (channel) => this.agentsOn(channel),
      aliasesOf: (agent) => this.aliasesOf(agent),
      identities: () => this.#options.channels.flatMap((c) => c.botIdentity ?? []),
      logger: this.#logger,
      report: (error) => this.report(error),
      maxAgentDepth: this.#options.maxAgentDepth ?? 5,
      answerBots: this.#options.answerBots ?? false,
      signal: this.#abort.signal,
      bursts: new Bursts(
        (agentId, turn) => this.#burstOption(agentId, turn.metadata.channelType),
        this.#abort.signal,
      ),
      write: (op) => this.#write(op),
      track: (work) => void this.#track(() => work),
      ...promptBytes(this.#options.recordPrompts),
    });
    this.#settling = settling(this.#options.channels, this.#options.unconfirmedReplies, {
      store: this.#store,
      write: (op) => this.#write(op),
      report: (error) => this.report(error),
      logger: this.#logger,
    });
    this.#accepting = true;
    const deadline = Date.now() + startTimeout;
    try {
      for (const channel of this.#options.channels) {
        await startWithin(channel, this.#handlers(channel), deadline, startTimeout);
      }
    } catch (error) {
      // A half-started bot would take turns without recovery: what started stops, and the
      // caller hears why (unless a stop asked for elsewhere is already under way).
      if (this.#stopped === undefined) {
        this.#stopped = this.#stop(false);
        await this.#stopped;
      }
      throw error;
    }
    const { commands } = this.#options;
    if (commands !== undefined && commands.length > 0) {
      await registerCommands(
        this.#options.channels,
        commands,
        (channel) => this.agentsOn(channel).map((agent) => agent.id),
        (cause, type) =>
          this.report(new ColloquyError(`could not register commands on ${type}`, { cause })),
      );
    }
    if (this.#leases === undefined) await this.#recover();
    else {
      // Shared: only work nobody holds is ours to resume, now and whenever an instance dies.
      await this.#sweep();
      this.#sweeper = setInterval(() => void this.#sweep(), this.#leases.claimEveryMs);
      this.#sweeper.unref();
    }
    this.#posts = new Posts({
      channels: this.#options.channels,
      store: this.#store,
      queue: capabilities.posts,
      write: (op) => this.#write(op),
      sendHooks: this.#options.sendHooks ?? [],
      unconfirmed: this.#options.unconfirmedReplies,
      shared: this.#leases !== undefined,
      ...(this.#leases !== undefined && { claimTtlMs: this.#leases.ttlMs }),
      report: (error) => this.report(error),
      track: (work) => this.#track(work),
    });
    await this.#posts.start();
  }

  /**
   * Posts `message` into a conversation outside any turn, through the outbox (docs/posts.md):
   * now, or `at` a later time (stored: a restart sends what came due while the bot was down).
   *
   * @example
   * ```ts
   * await bot.send('telegram:42', 'Your order shipped.');
   * await bot.send(await bot.openDm('slack', 'U0ALICE'), 'Reminder', { at: tomorrow });
   * ```
   */
  send(
    conversationId: string,
    message: string | PostMessage,
    options?: SendPostOptions,
  ): Promise<PostReceipt> {
    if (this.#posts === undefined)
      return Promise.reject(new ColloquyError('bot.send needs start() first'));
    return this.#posts.send(conversationId, message, options);
  }

  /** The conversation id of the DM with a person on `platform` (`'slack'`, `'discord'`, `'telegram'`). */
  openDm(platform: string, platformUserId: string): Promise<string> {
    if (this.#posts === undefined)
      return Promise.reject(new ColloquyError('bot.openDm needs start() first'));
    return this.#posts.openDm(platform, platformUserId);
  }

  /** The conversation leases when the store is shared (`BotOptions.shared`). */
  #sharing({ leasing }: StoreCapabilities): ConversationLeases | undefined {
    const { shared = this.#sharedStore } = this.#options;
    if (shared === false) return undefined;
    if (leasing === undefined) {
      throw new ColloquyError(
        'BotOptions.shared needs a store with leases and agent runs (a run ledger and ' +
          'leasing: SQLite, Postgres or in-memory); this store lacks them',
      );
    }
    // `true` (given, or the default for Postgres) takes its settings from the environment.
    const options = shared === true ? leaseOptionsFromEnv() : shared;
    return new ConversationLeases(leasing, options, this.#stopping.signal);
  }

  /**
   * Takes up the unfinished runs of conversations nobody holds (at start, and then every
   * `claimEveryMs`): each conversation is drained under the lease the claim took.
   */
  async #sweep(): Promise<void> {
    const leases = this.#leases!;
    let claimed;
    try {
      claimed = await leases.claim();
    } catch (cause) {
      this.report(new StoreError('could not claim unfinished agent runs', { cause }));
      return;
    }
    for (const { lease, runs } of claimed) {
      const conversationId = runs[0]?.conversationId;
      if (conversationId === undefined) {
        await leases.release(lease);
        continue;
      }
      void this.#track(() =>
        this.#order.conversation(conversationId, async () => {
          await leases.holding(lease, (held) => this.#drain(conversationId, held));
        }),
      );
    }
  }

  /**
   * Answers a conversation's unfinished runs, oldest turn first, while holding its lease: the
   * holder answers every instance's turns in order, and an instance that gets the lease after
   * finds its own turns answered. `local` is the turn this instance was handed (it keeps its
   * plan and channel).
   */
  async #drain(
    conversationId: string,
    held: HeldLease,
    local?: { turn: NewMessage; channel: Channel; plan: RunPlan },
  ): Promise<void> {
    const store = this.#store!;
    const open =
      (await this.#ledger?.getRuns({ conversationId, statuses: ['pending', 'running'] })) ?? [];
    const byTurn = new Map<string, AgentRun[]>();
    for (const run of open) byTurn.set(run.messageId, [...(byTurn.get(run.messageId) ?? []), run]);
    for (const [messageId, runs] of byTurn) {
      // Lost to another instance (this one paused past the expiry): it answers the rest.
      if (held.lost) return;
      const resumable: AgentRun[] = [];
      for (const run of runs) if (await this.#resumes(run)) resumable.push(run);
      if (resumable.length === 0) continue;
      const plan: RunPlan = {
        runs: new Map(resumable.map((run) => [run.agentId, withoutReply(run)])),
        only: new Set(resumable.map((run) => run.agentId)),
      };
      if (local !== undefined && local.turn.id === messageId) {
        const whole = resumable.length === local.plan.runs.size;
        await this.#onMessage(local.turn, local.channel, whole ? local.plan : plan);
        continue;
      }
      const turn = await store.getMessage(conversationId, messageId).catch(() => undefined);
      const channel = this.#options.channels.find((c) => c.type === turn?.metadata.channelType);
      if (turn === undefined || channel === undefined) {
        for (const run of resumable)
          this.#end(run, 'expired', 'cannot resume: turn or channel gone');
        continue;
      }
      await this.#sayResuming(channel, turn);
      await this.#runner!.inbound(turn, channel, plan);
    }
    // The lease is held until the replies sent under it are confirmed: an instance that takes
    // the conversation over would find them `sending` and mark their runs unconfirmed.
    await this.#runner!.confirmed(conversationId);
  }

  /**
   * Agent work a crash or a stop left unfinished: a run whose reply was recorded but never
   * confirmed is marked `unconfirmed` (that reply is not sent again), one recorded more than
   * `resumeWithinMs` ago is marked `expired`, one started `maxRunAttempts` times `failed`, and
   * the others are run again (after the turns of their conversation already queued).
   */
  async #recover(): Promise<void> {
    const store = this.#store!;
    const ledger = this.#ledger;
    if (ledger === undefined) return;
    let runs: AgentRun[];
    try {
      runs = await ledger.getRuns({ statuses: ['pending', 'running'] });
    } catch (cause) {
      this.report(new StoreError('could not read the unfinished agent runs', { cause }));
      return;
    }
    const byTurn = new Map<string, AgentRun[]>();
    for (const run of runs) {
      if (this.#handling.has(run.messageId)) continue; // delivered again since start
      if (run.replyId !== undefined) {
        // Settled in its conversation's order: the start does not wait for the platform.
        const settle = () => this.#settleReply(run);
        void this.#track(() => this.#order.conversation(run.conversationId, settle));
      } else if (await this.#resumes(run)) {
        byTurn.set(run.messageId, [...(byTurn.get(run.messageId) ?? []), run]);
      }
    }
    for (const open of byTurn.values()) {
      const { conversationId, messageId } = open[0]!;
      const turn = await store.getMessage(conversationId, messageId).catch(() => undefined);
      const channel = this.#options.channels.find((c) => c.type === turn?.metadata.channelType);
      if (turn === undefined || channel === undefined) {
        for (const run of open) this.#end(run, 'expired', 'cannot resume: turn or channel gone');
        continue;
      }
      await this.#sayResuming(channel, turn);
      this.#resume(turn, channel, open);
    }
  }

  /**
   * Whether an unfinished run is run again. If not, it is ended here: a run whose reply was
   * recorded is settled, the others as `#notResumed` says.
   */
  async #resumes(run: AgentRun): Promise<boolean> {
    if (run.replyId !== undefined) {
      await this.#settleReply(run);
      return false;
    }
    const stop = this.#notResumed(run);
    if (stop !== undefined) this.#end(run, stop.status, stop.error);
    return stop === undefined;
  }

  /** A run whose reply was recorded before a crash: settled (`settleReply`), then ended. */
  async #settleReply(run: AgentRun): Promise<void> {
    const settled = await settleReply(this.#settling!, run);
    if (settled !== undefined) this.#end(run, settled.status, settled.error);
  }

  /**
   * Why an unfinished run is not run again, if it is not: recorded too long ago, or started
   * `maxRunAttempts` times already (each start ended by the process stopping).
   */
  #notResumed(run: AgentRun): { status: 'expired' | 'failed'; error?: string } | undefined {
    const age = Date.now() - Date.parse(run.createdAt);
    if (!(age <= (this.#options.resumeWithinMs ?? 600_000))) return { status: 'expired' };
    const most = this.#options.maxRunAttempts ?? 3;
    if (!(run.attempts >= most)) return undefined; // a store that kept no count resumes it
    return {
      status: 'failed',
      error:
        `not resumed: the agent was started ${run.attempts} times on this turn and the bot ` +
        `stopped each time (maxRunAttempts ${most})`,
    };
  }

  #end(run: AgentRun, status: RunStatus, error?: string): void {
    const ended = { ...run, status, finishedAt: new Date().toISOString() };
    delete ended.reply;
    if (error !== undefined) ended.error = error;
    this.#write({ kind: 'run', run: ended }).catch((cause: unknown) => this.report(cause));
  }

  /** Lets `channel` say that `turn`, left unanswered when the bot last stopped, is answered. */
  async #sayResuming(channel: Channel, turn: NewMessage): Promise<void> {
    try {
      await channel.resuming?.(turn);
    } catch (cause) {
      this.report(
        new ColloquyError(`the ${channel.type} channel could not say it resumes`, { cause }),
      );
    }
  }

  /** Runs `open` (unfinished runs of `turn`) again, queued in the turn's conversation. */
  #resume(turn: NewMessage, channel: Channel, open: readonly AgentRun[]): Promise<void> {
    const plan: RunPlan = {
      runs: new Map(open.map((run) => [run.agentId, withoutReply(run)])),
      only: new Set(open.map((run) => run.agentId)),
    };
    const work = this.#track(() =>
      this.#order.message(turn, () => this.#runner!.inbound(turn, channel, plan)),
    );
    const handled = work.finally(() => this.#handling.delete(turn.id));
    this.#handling.set(turn.id, handled);
    return handled;
  }

  /**
   * A turn delivered again that the store already had: its unfinished runs to resume (no
   * reply recorded, and not ended by `#notResumed`), if any. Alone, a run whose reply was
   * recorded is settled here (shared, under the conversation's lease).
   */
  async #resumable(turn: NewMessage): Promise<RunPlan | undefined> {
    const runs = await this.#ledger?.getRuns({ messageId: turn.id }).catch(() => []);
    const open: AgentRun[] = [];
    for (const run of runs ?? []) {
      if (!isUnfinished(run)) continue;
      if (run.replyId !== undefined) {
        if (this.#leases === undefined) await this.#settleReply(run);
        continue;
      }
      // Ended here as the recovery at start would have (it leaves a turn delivered again alone).
      const stop = this.#notResumed(run);
      if (stop === undefined) open.push(run);
      else this.#end(run, stop.status, stop.error);
    }
    if (open.length === 0) return undefined;
    return {
      runs: new Map(open.map((run) => [run.agentId, withoutReply(run)])),
      only: new Set(open.map((run) => run.agentId)),
    };
  }

  /** The store an agent reads: its own when it has one, else the bot's. */
  #storeFor(agent: Agent): ConversationStore {
    return agent.conversationHistory ?? this.#store!;
  }

  #allAgents(): readonly Agent[] {
    const { agents } = this.#options;
    return isAgentMap(agents) ? [...agents.values()].flat() : agents;
  }

  /** Every store an agent was given besides the bot's (each once). */
  #agentStores(): ConversationStore[] {
    const all = this.#allAgents();
    const stores = new Set<ConversationStore>();
    for (const agent of all) {
      const own = agent.conversationHistory;
      if (own !== undefined && own !== this.#store) stores.add(own);
    }
    return [...stores];
  }

  /** A write capture committed: see `tellChange`. Never throws. */
  #changed(change: CapturedChange): Promise<void> {
    return tellChange(change, this.#agentStores(), this.#watchers, (error) => this.report(error));
  }

  #handlers(channel: Channel): ChannelHandlers {
    return {
      message: (message, given) => {
        const complete = this.#interaction(message, given, channel);
        return this.#inOrder(
          { waiting: this.#intake.has(message.conversationId), complete },
          (work) => this.#intake.message(message, work),
          (turn) => this.#inbound(turn, channel),
          message,
        );
      },
      edit: (edit, complete) =>
        this.#inOrder(
          { waiting: this.#intake.hasRef(edit), complete },
          (work) => this.#intake.change(edit, work),
          (whole) => this.#edited(whole),
          edit,
        ),
      delete: (deletion: MessageDeletion) =>
        this.#inOrder(
          { waiting: this.#intake.hasRef(deletion) },
          (work) => this.#intake.change(deletion, work),
          (event) =>
            this.#change(
              this.#commit({ kind: 'delete', deletion: event }),
              async (committed) => void (await committed),
            ),
          deletion,
        ),
      reaction: (change) => captureReaction(this.#store, change, this.#logger),
      capacity: (limit) => this.#capacity(limit),
      error: (error) => this.report(error),
      ...(this.#ledger !== undefined && { state: this.#state(this.#ledger) }),
      ...(this.#leases !== undefined && {
        lead: (name, work, signal) =>
          this.#leases!.lead(name, work, signal, (error) => this.report(error)),
      }),
    };
  }

  /**
   * A new turn: committed at once (in arrival order, with whatever else waits: group commit),
   * then run in its conversation's order. Resolves when committed; rejects with a `StoreError`
   * when not, so the channel does not acknowledge it. The turn is run once per process
   * however often it is delivered; a turn the store had before this process saw it is not run
   * again.
   */
  #inbound(message: NewMessage, channel: Channel): Promise<Delivery> {
    const turn = withAgentMentions(message, this.agentsOn(channel));
    const planned = this.#runner!.planned(turn, channel);
    // The turn and its pending runs are handed over together: one commit, most of the time.
    const tracked = this.#capture!.track({ kind: 'append', message: turn });
    const appended = tracked.answered as Promise<AppendResult>;
    const stored = tracked.committed as Promise<AppendResult>;
    stored.catch(() => {}); // awaited only when the first try failed: never left unhandled
    const runs = planned.map((run) => this.#write({ kind: 'run', run, create: true }));
    const committed: Promise<CaptureOutcome> = Promise.all([appended, ...runs]).then(
      ([result]) => (result.inserted ? 'stored' : 'duplicate'),
      (error: unknown) =>
        error instanceof StoreError && error.transient === false ? 'rejected' : 'buffered',
    );
    let handled = this.#handling.get(turn.id);
    if (handled === undefined) {
      const work = this.#track(() =>
        this.#order.message(turn, async () => {
          // Not committed at the first try: capture tries again, and the turn is answered once
          // it is committed. Not when the bot stops first or capture gives up on it: a restart
          // resumes its pending runs, and a turn given up on is in the dead-letter file.
          const result = await appended.catch(() => this.#eventually(stored));
          if (result === undefined) return;
          const plan = result.inserted
            ? { runs: new Map(planned.map((run) => [run.agentId, run])) }
            : await this.#resumable(turn);
          if (plan === undefined) return;
          const leases = this.#leases;
          if (leases === undefined || plan.runs.size === 0) {
            await this.#onMessage(turn, channel, plan);
            return;
          }
          // Not held when the bot stops while another instance holds it: the runs stay pending.
          await leases.hold(turn.conversationId, (held) =>
            this.#drain(turn.conversationId, held, { turn, channel, plan }),
          );
        }),
      );
      handled = work.finally(() => this.#handling.delete(turn.id));
      this.#handling.set(turn.id, handled);
    }
    // The conversation's next turn went on once the replies were sent; this delivery is
    // handled once their confirmations are committed too (`idle` and `stop` wait for them).
    const confirmed = handled.then(() => this.#runner!.confirmed(turn.conversationId));
    return acknowledged(committed, turn.id, turn.conversationId, confirmed);
  }

  /**
   * Hands `event` (or `complete`, once the channel has it) over in intake order: at once when
   * it is whole and nothing of its conversation (or message) is `waiting`, else through
   * `queue`, which runs it after what waits. An event that arrived before stop began is
   * handed over even if stop begins meanwhile (stop waits for it). Rejects when the channel
   * could not complete it.
   */
  #inOrder<T>(
    place: { waiting: boolean; complete?: Promise<T> | undefined },
    queue: (work: () => Promise<void>) => Promise<void>,
    handOver: (event: T) => Promise<Delivery>,
    event: T,
  ): Promise<Delivery> {
    if (!this.#accepting) return Promise.reject(notAccepting());
    const { waiting, complete } = place;
    if (!waiting && complete === undefined) return handOver(event);
    return new Promise((resolve, reject) => {
      void this.#track(() =>
        queue(async () => {
          try {
            resolve(handOver(complete === undefined ? event : await complete));
          } catch (error) {
            reject(error);
          }
        }),
      );
    });
  }

  /** An interaction turn made whole: who answers it (see `resolveInteraction`). */
  #interaction(
    message: NewMessage,
    complete: Promise<NewMessage> | undefined,
    channel: Channel,
  ): Promise<NewMessage> | undefined {
    if (message.metadata.interaction === undefined) return complete;
    const agentIds = this.agentsOn(channel).map((agent) => agent.id);
    const { commands } = this.#options;
    const repeated = this.#presses.repeats(message);
    return (complete ?? Promise.resolve(message)).then((turn) =>
      resolveInteraction(turn, commands, this.store, agentIds, repeated),
    );
  }

  #edited(edit: MessageEdit): Promise<Delivery> {
    const conversationId = this.#recent.get(refKey(edit))?.message.conversationId;
    return this.#change(this.#commit({ kind: 'edit', edit }), async (committed) => {
      // An edit re-answered (rerunOnEdit) is a turn of its conversation: queue it there.
      await this.#order.change(edit, () => this.#onEdit(edit, committed), conversationId);
      if (conversationId !== undefined) await this.#runner!.confirmed(conversationId);
    });
  }

  /** What `committed` resolves with, or undefined once it rejects or the bot is stopping. */
  #eventually<T>(committed: Promise<T>): Promise<T | undefined> {
    const signal = this.#stopping.signal;
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const stop = () => resolve(undefined);
      signal.addEventListener('abort', stop, { once: true });
      void committed
        .then(resolve, () => resolve(undefined))
        .finally(() => signal.removeEventListener('abort', stop));
    });
  }

  /** Hands `op` to capture; what became of it, never a rejection. */
  #commit(op: StoreOperation): Promise<CaptureOutcome> {
    return this.#capture!.write(op).then(
      (value) =>
        op.kind === 'append' && !(value as { inserted: boolean }).inserted ? 'duplicate' : 'stored',
      (error: unknown) =>
        error instanceof StoreError && error.transient === false ? 'rejected' : 'buffered',
    );
  }

  /** An edit or deletion: committed in arrival order, then `then` runs in its turn's order. */
  #change(
    committed: Promise<CaptureOutcome>,
    then: (committed: Promise<CaptureOutcome>) => Promise<void>,
  ): Promise<Delivery> {
    const handled = this.#track(() => then(committed));
    return acknowledged(committed, undefined, undefined, handled);
  }

  /** Commits one write through capture, waiting out passing failures (`writeCommitted`). */
  #write(op: StoreOperation): Promise<unknown> {
    return writeCommitted(this.#capture!, op, this.#stopping.signal);
  }

  /** Channels' small values, read from the store and written through capture. */
  #state(ledger: RunLedger): ChannelState {
    return {
      get: (key) => ledger.getState(key),
      set: async (key, value) => void (await this.#write({ kind: 'state', key, value })),
    };
  }

  /** Resolves once fewer than `limit` events are in flight. */
  #capacity(limit: number): Promise<void> {
    if (this.#inflight.size < limit) return Promise.resolve();
    return new Promise((resolve) => this.#roomWaiters.push({ limit, resolve }));
  }

  /**
   * Runs one unit of work as in-flight (from the moment it is queued), so `stop` can wait for
   * it; never rejects.
   */
  #track(work: () => Promise<void>): Promise<void> {
    const run = work()
      .catch((error: unknown) => this.report(error))
      .finally(() => {
        this.#inflight.delete(run);
        this.#roomWaiters = this.#roomWaiters.filter((waiter) => {
          if (this.#inflight.size >= waiter.limit) return true;
          waiter.resolve();
          return false;
        });
      });
    this.#inflight.add(run);
    return run;
  }

  async #onMessage(message: NewMessage, channel: Channel, plan: RunPlan): Promise<void> {
    if (this.#options.rerunOnEdit === true && message.metadata.messageId !== undefined) {
      const { channelType, channelId, messageId } = message.metadata;
      this.#recent.set(refKey({ channelType, channelId, messageId }), { message, channel });
      if (this.#recent.size > RECENT_TURNS) this.#recent.delete(this.#recent.keys().next().value!);
    }
    await this.#runner!.inbound(message, channel, plan);
  }

  async #onEdit(edit: MessageEdit, committed: Promise<CaptureOutcome>): Promise<void> {
    await committed;
    if (this.#options.rerunOnEdit !== true) return;
    const recent = this.#recent.get(refKey(edit));
    // A redelivered edit changes nothing: it is not answered again.
    if (recent === undefined || recent.message.content === edit.content) return;
    const { metadata } = recent.message;
    const edited: NewMessage = {
      ...recent.message,
      content: edit.content,
      metadata: { ...metadata, rerunForEdit: (metadata.rerunForEdit ?? 0) + 1 },
    };
    recent.message = edited;
    await this.#runner!.edited(edited, recent.channel);
  }

  /**
   * Stops taking turns, stops the channels, waits for the turns in flight and those queued
   * behind them, gives capture `flushTimeoutMs` to commit what waits and closes the store if
   * the bot opened it. Writes left unwritten go to the dead-letter file and are reported (and
   * `installSignalHandlers` then exits with code 1). Safe to call more than once.
   */
  stop(): Promise<void> {
    this.#stopped ??= this.#stop();
    return this.#stopped;
  }

  /** `afterStart`: wait for a start under way first (false when the failing start stops). */
  async #stop(afterStart = true): Promise<void> {
    if (afterStart) await this.#started?.catch(() => undefined);
    clearInterval(this.#sweeper);
    this.#posts?.stop();
    for (const channel of this.#options.channels) {
      try {
        await channel.stop();
      } catch (cause) {
        this.report(new ColloquyError(`could not stop the ${channel.type} channel`, { cause }));
      }
    }
    // Channels are stopped: what arrives now is not committed, so it is not acknowledged.
    this.#accepting = false;
    // Turns still waiting for a conversation held elsewhere stay pending for that instance.
    this.#stopping.abort();
    await this.idle();
    this.#abort.abort();
    const capture = this.#capture;
    if (capture !== undefined) {
      await capture.close(this.#options.flushTimeoutMs ?? 5000);
      const { deadLettered } = capture.stats;
      if (deadLettered > 0) {
        const file = this.#options.capture?.deadLetterPath ?? deadLetterPathOf(this.#store);
        const where =
          file === undefined
            ? 'logged above'
            : `kept in ${file}; \`colloquy import ${file}\` writes them back`;
        this.report(
          new StoreError(`${deadLettered} writes could not be stored: ${where}`, {
            transient: false,
          }),
        );
      }
    }
    if (this.#ownsStore) await this.#store?.close?.();
  }

  /**
   * SIGINT / SIGTERM stop the bot gracefully, logging what is still being finished
   * (`SIGINT: finishing 1 answer — Ctrl-C again to quit now`); a second signal exits at once.
   * Returns a function that removes the handlers.
   *
   * @example
   * ```ts
   * bot.installSignalHandlers();
   * ```
   */
  installSignalHandlers(): () => void {
    return installSignalHandlers({
      stop: () => this.stop(),
      pending: () => this.#handling.size,
      deadLettered: () => this.captureStats?.deadLettered ?? 0,
      logger: this.#logger,
    });
  }
}

/**
 * The handler's answer for an event whose commit is `committed`: a `Delivery` once stored (or
 * found stored), a `StoreError` when the store failed (it is retried behind, but the platform
 * must not take the event as received).
 */
async function acknowledged(
  committed: Promise<CaptureOutcome>,
  messageId: string | undefined,
  conversationId: string | undefined,
  handled: Promise<void>,
): Promise<Delivery> {
  const outcome = await committed;
  if (outcome === 'stored' || outcome === 'duplicate') return { handled };
  throw new StoreError(
    outcome === 'buffered'
      ? 'the event is not committed yet (the store is failing; capture retries it)'
      : 'the store rejected the event',
    { conversationId, messageId, transient: outcome === 'buffered' },
  );
}

/** A run as resumed: without what was read about its reply. */
function withoutReply(run: AgentRun): AgentRun {
  const { reply: _, ...rest } = run;
  return rest;
}

/**
 * `shared: true`'s settings: `COLLOQUY_LEASE_TTL_MS` (a whole number of ms) sets the lease ttl,
 * for deployments that want a dead instance's conversations taken up sooner (or later).
 */
function leaseOptionsFromEnv(env = process.env): SharedOptions {
  const text = env.COLLOQUY_LEASE_TTL_MS?.trim();
  if (!text) return {};
  const ttl = Number(text);
  if (!Number.isSafeInteger(ttl) || ttl < 100) {
    throw new ColloquyError(
      `COLLOQUY_LEASE_TTL_MS must be a whole number of milliseconds, at least 100, not "${text}"`,
    );
  }
  return { leaseTtlMs: ttl };
}

/** The runner's `promptBytes` for `recordPrompts`. */
function promptBytes(record: BotOptions['recordPrompts']): { promptBytes?: number } {
  if (record === undefined || record === false) return {};
  return { promptBytes: record === true ? 64 * 1024 : (record.maxBytes ?? 64 * 1024) };
}

/** What became of an event's write: see `Bot.#commit`. */
type CaptureOutcome = 'stored' | 'duplicate' | 'buffered' | 'rejected';

/** `<database file>.dead-letter.jsonl` for a store kept in a file (its `path`). */
function deadLetterPathOf(store: ConversationStore | undefined): string | undefined {
  const path = store?.path;
  return path !== undefined && path !== '' && path !== ':memory:'
    ? `${path}.dead-letter.jsonl`
    : undefined;
}

function notAccepting(): StoreError {
  return new StoreError('the bot is not running; the event was not committed', {
    transient: true,
  });
}

function isAgentMap(
  agents: BotOptions['agents'],
): agents is ReadonlyMap<Channel, readonly Agent[]> {
  return agents instanceof Map;
}
