/**
 * The `Bot`: its public surface, and its start and stop. What it does with events is in
 * `bot/intake.ts` (commit with the pending runs, acknowledge, hand to the drain); agent work
 * runs in `bot/drain.ts` (the one queue: `agent_runs`, drained per conversation) and one turn's
 * agents in `bot/runner.ts`; its options are in `bot/options.ts`.
 */
import type { Agent } from './agent.js';
import type { Capture } from './capture.js';
import type { Channel, Delivery } from './channel.js';
import { ColloquyError } from './errors.js';
import { consoleLogger, redactingLogger } from './logger.js';
import type { Logger } from './logger.js';
import type { CapturedChange, ConversationStore } from './store.js';
import type { NewMessage } from './types.js';
import { History } from './history/history.js';
import type { HistoryOptions } from './history/history.js';
import { reactToStored } from './reactions.js';
import type { PostMessage, PostReceipt, SendPostOptions } from './posts.js';
import { InFlight } from './bot/inflight.js';
import { notAccepting } from './bot/intake.js';
import type { Posts } from './bot/posts.js';
import {
  agentStores,
  agentsOn,
  aliasesOf,
  allAgents,
  answeringChannel,
  burstOption,
  closeCapture,
  maxRunAttemptsProblem,
  openDefaultStore,
} from './bot/options.js';
import type { BotOptions, ErrorHandler } from './bot/options.js';
import { botParts } from './bot/parts.js';
import type { Parts } from './bot/parts.js';
import { installSignalHandlers } from './bot/signals.js';
import { logErrors, reportTo } from './bot/report.js';
import {
  registerBotCommands,
  resumeWork,
  startProblem,
  startTimeoutOf,
  startWithin,
} from './bot/start.js';
import { tellChange } from './bot/tap.js';
import { stoppingController } from './bot/write.js';

export { setDefaultStore } from './bot/options.js';
export type { BotOptions, DefaultStore, ErrorHandler } from './bot/options.js';
export { mentionsName, trailingAgentTurns, withAgentMentions } from './bot/turn.js';

/**
 * The runtime: starts channels, commits every turn to the store (a channel's handler resolves
 * once its event is committed, so it can acknowledge it), runs each new inbound turn through
 * `[...interceptors, interactions, loop guard, dispatch]` and sends the agents' answers, each
 * committed too. The turns of one conversation run one after another in the order they arrived
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
  readonly #inflight = new InFlight((error) => this.report(error));
  readonly #abort = stoppingController();
  /** Aborted when `stop` begins: a turn waiting for its conversation's lease gives up. */
  readonly #stopping = stoppingController();
  #sweeper: NodeJS.Timeout | undefined;
  #store: ConversationStore | undefined;
  #ownsStore = false;
  /** Whether the store the bot opened for itself is shared by default (Postgres). */
  #sharedStore = false;
  readonly #watchers = new Set<(change: CapturedChange) => void>();
  /** The bot's parts once `start` has built them. */
  #running: Parts | undefined;
  #posts: Posts | undefined;
  #started: Promise<void> | undefined;
  #stopped: Promise<void> | undefined;
  #handler: ErrorHandler;

  constructor(options: BotOptions) {
    const problem = maxRunAttemptsProblem(options);
    if (problem !== undefined) throw new ColloquyError(problem);
    this.#options = options;
    this.#logger = redactingLogger(options.logger ?? consoleLogger);
    this.#store = options.store;
    this.#handler = logErrors(this.#logger);
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
    await this.#running?.capture.settled();
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
    await this.#inflight.idle();
  }

  /** Capture's counters (committed, waiting, dead-lettered…), after `start`. */
  get captureStats(): Capture['stats'] | undefined {
    return this.#running?.capture.stats;
  }

  /** Writes given up on (refused for good by the store, or unwritten at stop). */
  get captureDeadLetters(): Capture['deadLetters'] {
    return this.#running?.capture.deadLetters ?? [];
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
      busy: () => this.#running?.runner.answering(conversationId) ?? false,
    });
  }

  /**
   * Adds the bot's reaction to a stored turn, through its channel, recorded in
   * `message_reactions` through capture; rejects with one line for a turn the store does not
   * have, or before `start`.
   *
   * @example
   * ```ts
   * await bot.react('telegram:1001', 'telegram:1001:7', '👍');
   * ```
   */
  react(conversationId: string, messageId: string, emoji: string): Promise<void> {
    const running = this.#running;
    if (running === undefined)
      return Promise.reject(new ColloquyError('bot.react needs start() first'));
    const { channels } = this.#options;
    return reactToStored(channels, running.store, running.write, conversationId, messageId, emoji);
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
    reportTo(this.#handler, this.#logger, error);
  }

  /**
   * Commits and answers a turn your code read from a platform event colloquy does not handle,
   * exactly as one its channel delivered (in its conversation's order), replying through
   * `channel` (default: the bot's channel of `metadata.channelType`). Resolves once committed
   * with its `handled`; rejects with a `StoreError` when not committed (or not running).
   *
   * @example
   * ```ts
   * // a turn your code read from a platform event of its own (see docs/chain.md)
   * const { handled } = await bot.receive(turnFromChannelPost(update.channel_post));
   * await handled;
   * ```
   */
  receive(turn: NewMessage, channel?: Channel): Promise<Delivery> {
    const running = this.#running;
    if (running === undefined) return Promise.reject(notAccepting());
    const to = answeringChannel(this.#options.channels, turn, channel);
    if (to instanceof ColloquyError) return Promise.reject(to);
    return running.intake.message(turn, to);
  }

  /** The agents that answer on a channel. */
  agentsOn(channel: Channel): readonly Agent[] {
    return agentsOn(this.#options.agents, channel);
  }

  /** Everything an agent is known by: id, name, its aliases and its channels' bot identities. */
  aliasesOf(agent: Agent): readonly string[] {
    return aliasesOf(this.#options, agent);
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
    const problem = startProblem(this.#options, this.#logger);
    if (problem !== undefined) throw new ColloquyError(problem);
    const startTimeout = startTimeoutOf(this.#options.startTimeoutMs);
    for (const agent of new Set(allAgents(this.#options.agents))) agent.prepare?.();
    if (this.#store === undefined) {
      const opened = await openDefaultStore();
      this.#store = opened.store;
      this.#ownsStore = true;
      this.#sharedStore = opened.shared;
    }
    const running = botParts(this.#store, {
      options: this.#options,
      logger: this.#logger,
      shared: this.#options.shared ?? this.#sharedStore,
      inflight: this.#inflight,
      stopping: this.#stopping.signal,
      aborted: this.#abort.signal,
      report: (error) => this.report(error),
      committed: (change) =>
        this.#watchers.size > 0 || agentStores(this.#options, this.#store).length > 0
          ? this.#changed(change)
          : undefined,
      storeFor: (agent) => this.#storeFor(agent),
      agentsOn: (channel) => this.agentsOn(channel),
      aliasesOf: (agent) => this.aliasesOf(agent),
      burstOption: (agentId, channelType) => burstOption(this.#options, agentId, channelType),
    });
    this.#running = running;
    running.intake.accepting = true;
    const deadline = Date.now() + startTimeout;
    try {
      for (const channel of this.#options.channels) {
        await startWithin(channel, running.intake.handlers(channel), deadline, startTimeout);
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
    await registerBotCommands(this.#options, (error) => this.report(error));
    this.#sweeper = await resumeWork(running);
    this.#posts = running.posts;
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

  /**
   * The DM's conversation id with a person on `on`: a platform with one channel (`'slack'`), a
   * channel's bot identity id (`'slack:U0BOTTWO'`) or the `Channel` itself (docs/posts.md).
   */
  openDm(on: string | Channel, platformUserId: string): Promise<string> {
    if (this.#posts === undefined)
      return Promise.reject(new ColloquyError('bot.openDm needs start() first'));
    return this.#posts.openDm(on, platformUserId);
  }

  /** The store an agent reads: its own when it has one, else the bot's. */
  #storeFor(agent: Agent): ConversationStore {
    return agent.conversationHistory ?? this.#store!;
  }

  /** A write capture committed: see `tellChange`. Never throws. */
  #changed(change: CapturedChange): Promise<void> {
    return tellChange(change, agentStores(this.#options, this.#store), this.#watchers, (error) =>
      this.report(error),
    );
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
    if (this.#running !== undefined) this.#running.intake.accepting = false;
    // Turns still waiting for a conversation held elsewhere stay pending for that instance.
    this.#stopping.abort();
    await this.idle();
    this.#abort.abort();
    const capture = this.#running?.capture;
    if (capture !== undefined) {
      const unwritten = await closeCapture(capture, this.#options, this.#store);
      if (unwritten !== undefined) this.report(unwritten);
    }
    if (this.#ownsStore) await this.#store?.close();
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
      pending: () => this.#running?.drain.pending ?? 0,
      deadLettered: () => this.captureStats?.deadLettered ?? 0,
      logger: this.#logger,
    });
  }
}
