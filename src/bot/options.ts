/**
 * What a bot is made of and how it is set up: `BotOptions`, the error handler's type, the store
 * a bot opens when given none, and the settings read from options or the environment.
 */
import type { Agent } from '../agent.js';
import type { Capture, CaptureOptions } from '../capture.js';
import type { Interceptor, SendHook, TurnContext } from '../chain.js';
import type { Channel } from '../channel.js';
import { ColloquyError, StoreError } from '../errors.js';
import type { Command } from '../interactions.js';
import type { Logger } from '../logger.js';
import { channelOf } from '../channel/place.js';
import type { ConversationStore } from '../store.js';
import type { NewMessage } from '../types.js';
import type { BurstOption } from './bursts.js';
import type { AnswerReactions } from './reactions.js';
import type { UnconfirmedReplies } from './settle.js';
import type { SharedOptions } from './shared.js';

/** A store a bot opened for itself, and whether other instances of the bot may share it. */
export interface DefaultStore {
  store: ConversationStore;
  shared: boolean;
}

let defaultStore: (() => Promise<DefaultStore>) | undefined;

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
  defaultStore = open;
}

/**
 * Opens the store of a bot given none (`setDefaultStore`); rejects with one line when nothing
 * set how.
 */
export async function openDefaultStore(): Promise<DefaultStore> {
  if (defaultStore === undefined) {
    throw new ColloquyError('no store: pass BotOptions.store, or import Bot from colloquy');
  }
  return defaultStore();
}

/** `BotOptions.maxRunAttempts`' problem: not a whole number, at least 1; undefined when none. */
export function maxRunAttemptsProblem(options: BotOptions): string | undefined {
  const { maxRunAttempts } = options;
  if (maxRunAttempts === undefined || (Number.isInteger(maxRunAttempts) && maxRunAttempts >= 1))
    return undefined;
  return `BotOptions.maxRunAttempts must be a whole number, at least 1, not ${String(maxRunAttempts)}`;
}

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
  /**
   * The inbound chain's user links, in order: after capture, before the interactions link (so
   * they see and may stop commands and button presses too), the loop guard and dispatch.
   */
  interceptors?: readonly Interceptor<TurnContext>[];
  /** Wrap every reply before it is recorded and posted, in order (see `SendHook`). */
  sendHooks?: readonly SendHook[];
  /**
   * Where the bot logs (default: the console logger). Whatever logger is given, each call
   * reaches it with secrets masked: the message, the fields, and errors with their causes.
   */
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
  /**
   * Answer reactions: a reaction a person adds to a message one of the bot's agents wrote
   * becomes a turn of that person for that agent (`[reacted 👎 to Support: "…"]`, with
   * `metadata.reaction`), in the message's conversation and thread, committed and answered like
   * any turn. `true` for every emoji, or `{ emoji: [...] }` for those listed, as the platform
   * names them (`'👎'` on Discord and Telegram, `'-1'` on Slack), with any skin tone. Removals, reactions by bots
   * (`ReactionChange.byBot`: on Slack, a reactor `users.info` says is a bot or could not look
   * up) and reactions on a person's message are only recorded; a reaction delivered again, or
   * taken back and added again, is the same turn, answered once. Default false: reactions are
   * only recorded (`message_reactions`).
   */
  answerReactions?: AnswerReactions;
  /**
   * Run the agents again when a person edits a recent turn (default false); an edit delivered
   * again, or older than the edit answered last, is not answered.
   */
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

/** The agents that answer on `channel`. */
export function agentsOn(agents: BotOptions['agents'], channel: Channel): readonly Agent[] {
  return isAgentMap(agents) ? (agents.get(channel) ?? []) : agents;
}

/** Every agent of the bot, on every channel (an agent on several channels more than once). */
export function allAgents(agents: BotOptions['agents']): readonly Agent[] {
  return isAgentMap(agents) ? [...agents.values()].flat() : agents;
}

/** Everything `agent` is known by: id, name, its aliases and its channels' bot identities. */
export function aliasesOf(options: BotOptions, agent: Agent): readonly string[] {
  const aliases = new Set([agent.id, agent.name, ...(agent.agentAliases ?? [])]);
  for (const channel of options.channels) {
    // Read live: a channel may know its identity before `start` resolves.
    const identity = channel.botIdentity;
    if (identity === undefined || !agentsOn(options.agents, channel).includes(agent)) continue;
    aliases.add(identity.id);
    if (identity.username !== undefined) {
      aliases.add(identity.username);
      aliases.add(`@${identity.username}`);
    }
  }
  return [...aliases];
}

/** The burst mode of an agent: its own, else the bot's, else its channel's (else `queue`). */
export function burstOption(
  options: BotOptions,
  agentId: string,
  channelType: string | undefined,
): BurstOption {
  const agents = options.channels.flatMap((channel) => agentsOn(options.agents, channel));
  const agent = agents.find((a) => a.id === agentId);
  const channel = options.channels.find((c) => c.type === channelType);
  return agent?.bursts ?? options.bursts ?? channel?.bursts ?? 'queue';
}

/** Every store an agent was given besides the bot's `store` (each once). */
export function agentStores(
  options: BotOptions,
  store: ConversationStore | undefined,
): ConversationStore[] {
  const stores = new Set<ConversationStore>();
  for (const agent of allAgents(options.agents)) {
    const own = agent.conversationHistory;
    if (own !== undefined && own !== store) stores.add(own);
  }
  return [...stores];
}

/**
 * `shared: true`'s settings: `COLLOQUY_LEASE_TTL_MS` (a whole number of ms) sets the lease ttl,
 * for deployments that want a dead instance's conversations taken up sooner (or later).
 */
export function leaseOptionsFromEnv(env = process.env): SharedOptions {
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
export function promptBytes(record: BotOptions['recordPrompts']): { promptBytes?: number } {
  if (record === undefined || record === false) return {};
  return { promptBytes: record === true ? 64 * 1024 : (record.maxBytes ?? 64 * 1024) };
}

/** `<database file>.dead-letter.jsonl` for a store kept in a file (its `path`). */
export function deadLetterPathOf(store: ConversationStore | undefined): string | undefined {
  const path = store?.path;
  return path !== undefined && path !== '' && path !== ':memory:'
    ? `${path}.dead-letter.jsonl`
    : undefined;
}

/**
 * The channel a turn handed to `bot.receive` is answered on: `given`, else the bot's channel of
 * the turn's platform (the one it names in `metadata.via`, if any); an error when the bot has no
 * such channel.
 */
export function answeringChannel(
  channels: readonly Channel[],
  turn: NewMessage,
  given: Channel | undefined,
): Channel | ColloquyError {
  const { channelType, via } = turn.metadata;
  const to = given ?? channelOf(channels, channelType, turn.conversationId, via);
  if (to !== undefined && channels.includes(to)) return to;
  return new ColloquyError(
    `the bot has no ${given?.type ?? turn.metadata.channelType} channel to answer on`,
  );
}

/**
 * Closes `capture` at stop, giving it `flushTimeoutMs` to commit what waits; what it left
 * unwritten, as `stop` reports it (undefined when everything was written).
 */
export async function closeCapture(
  capture: Capture,
  options: BotOptions,
  store: ConversationStore | undefined,
): Promise<StoreError | undefined> {
  await capture.close(options.flushTimeoutMs ?? 5000);
  const { deadLettered } = capture.stats;
  const file = options.capture?.deadLetterPath ?? deadLetterPathOf(store);
  return deadLettered > 0 ? deadLetterError(deadLettered, file) : undefined;
}

/** What `stop` reports when `count` writes were left unwritten, kept in `file` if any. */
export function deadLetterError(count: number, file: string | undefined): StoreError {
  const where =
    file === undefined
      ? 'logged above'
      : `kept in ${file}; \`colloquy import ${file}\` writes them back`;
  return new StoreError(`${count} writes could not be stored: ${where}`, { transient: false });
}

function isAgentMap(
  agents: BotOptions['agents'],
): agents is ReadonlyMap<Channel, readonly Agent[]> {
  return agents instanceof Map;
}
