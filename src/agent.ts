import type { FetchAttachment } from './attachments.js';
import type { BurstOption } from './bot/bursts.js';
import type { OutboundFile } from './channel.js';
import type { ColloquyError } from './errors.js';
import type { ConversationStore } from './store.js';
import type { MessageSource, NewMessage, StoredMessage } from './types.js';

/** What the runtime gives an agent for one turn. */
export interface AgentRunContext {
  conversationId: string;
  /** The store the conversation lives in (the agent's `conversationHistory` when it set one). */
  store: ConversationStore;
  /** Every alias the agent is known by right now: its id, name, bot user ids, @usernames. */
  aliases: readonly string[];
  /** Captures an extra turn the agent produced (tool calls and their results). Never throws. */
  record(message: NewMessage): Promise<void>;
  /**
   * Keeps the assembled prompt on the run's row (`agent_runs.prompt`), when the bot records
   * prompts (`BotOptions.recordPrompts`); absent otherwise. Never throws.
   */
  recordPrompt?(prompt: unknown): void;
  /** Reports a problem the agent worked around (a plugin that threw); never throws. */
  report?(error: ColloquyError): void;
  /**
   * Set when the agent runs a task another agent handed it (`delegate`): the delegation's id
   * (its task turn), who delegated, that agent's aliases, and how deep the chain is.
   */
  delegation?: { id: string; by: string; byAliases: readonly string[]; chain: number };
  /** How many agent turns in a row led to this one. */
  depth: number;
  signal?: AbortSignal;
  /**
   * Shows the answer as it is written, when the channel can (absent otherwise): call it with
   * the whole text so far as the model writes it. What `run` returns is still the answer: it
   * replaces what was shown and is what is recorded.
   */
  stream?(textSoFar: string): void;
  /**
   * Fetches the bytes of a file a turn of this conversation carries, through the channel it
   * came from (`Channel.fetchAttachment`); absent when the channel cannot.
   */
  fetchAttachment?: FetchAttachment;
  /**
   * Adds the bot's reaction to the turn being answered (`'👀'`), recorded in
   * `message_reactions` with the bot as participant. Absent on a channel that cannot react.
   */
  react?(emoji: string): Promise<void>;
}

export interface AgentResult {
  output: string;
  /** Stored on the outbound turn's metadata (for example `{ model: 'offline' }`). */
  metadata?: Record<string, unknown>;
  /** Stored as the reply's `traceId`: the model response (or trace) that produced it. */
  traceId?: string;
  /** Stored as the reply's `sources`: what it drew on (RAG citations). */
  sources?: MessageSource[];
  /** Files posted with the reply, after its text (see `OutboundFile`). */
  files?: OutboundFile[];
}

/**
 * The seam between the runtime and agents. `BaseAgent` (exported from `colloquy`) implements
 * it; the runtime needs nothing more.
 */
export interface Agent {
  /** Stable id, used as the participant id of the agent's turns. */
  readonly id: string;
  readonly name: string;
  /** Aliases given by hand; the runtime adds the bot identities of the agent's channels. */
  readonly agentAliases?: readonly string[];
  /**
   * The store to read history from, when not the runtime's. The `Bot` copies every turn,
   * edit and deletion it captures into it (after committing them to its own store, before
   * the agent reads), so it holds the previous exchange like the bot's store does.
   */
  conversationHistory?: ConversationStore;
  /** Whether to answer this turn; by default, when it concerns the agent (see `concerns`). */
  shouldRespond?(message: NewMessage, aliases: readonly string[]): boolean;
  /** What this agent does with a person's burst of turns; default: the bot's `bursts`. */
  bursts?: BurstOption;
  /**
   * Called once by `Bot.start`, before the store opens or a channel starts: check settings
   * (the model from the environment, say) and throw to refuse to start, so a bad one is
   * reported at start and not by every turn.
   */
  prepare?(): void;
  run(input: NewMessage, ctx: AgentRunContext): Promise<AgentResult>;
}

/**
 * True when a turn concerns an agent known by `aliases`: it wrote it, mentions it, replies to
 * one of its messages, or it is in a DM. The same rule the stores apply in SQL. Ids compare
 * exactly: channels resolve platform mention syntax to participant ids before capture.
 *
 * @example
 * ```ts
 * concerns(turn, ['support-agent', 'telegram:99', '@orders_bot']);
 * ```
 */
export function concerns(message: NewMessage, aliases: readonly string[]): boolean {
  const known = new Set(aliases);
  const is = (id: string | undefined) => id !== undefined && known.has(id);
  return (
    message.scope === 'dm' ||
    is(message.participant.id) ||
    is(message.metadata?.replyToParticipantId) ||
    (message.metadata?.mentions ?? []).some(is)
  );
}

/**
 * Whether `message` replies to the message `replyTo` names (`GetOptions.replyTo`).
 *
 * @example
 * ```ts
 * repliesTo(press, { participantId: 'support-agent', messageId: '1712345678.000100' });
 * ```
 */
export function repliesTo(
  message: Pick<NewMessage, 'metadata'>,
  replyTo: { participantId: string; messageId: string },
): boolean {
  const { replyToParticipantId, replyToMessageId } = message.metadata;
  return replyToParticipantId === replyTo.participantId && replyToMessageId === replyTo.messageId;
}

/**
 * True when `turn` answers, inside a thread, the message that opened the thread (a Slack
 * channel mention answered in a thread of it; a Discord forum post's first message).
 */
function opensThread(turn: NewMessage): boolean {
  const { threadId, replyToMessageId } = turn.metadata ?? {};
  return threadId !== undefined && replyToMessageId === threadId;
}

/**
 * True when `conversationId` is a thread one of `aliases` opened by answering its first
 * message in it: every turn of such a thread concerns the agent, as a reply to its message
 * does, so a follow-up there needs no mention. Reads the newest turn (a conversation that is
 * not a thread ends there) and then the agent's newest 100 turns in the thread.
 *
 * @example
 * ```ts
 * if (await threadConcerns(store, 'slack:T1:C1:1700000000.000100', ['support-agent'])) …
 * ```
 */
export async function threadConcerns(
  store: ConversationStore,
  conversationId: string,
  aliases: readonly string[],
): Promise<boolean> {
  // Without this, a channel conversation's whole history would be read to find no thread turn.
  const [newest] = await store.get(conversationId, { limit: 1 });
  if (newest?.scope !== 'thread') return false;
  const own: StoredMessage[] = await store.get(conversationId, {
    participantIds: [...aliases],
    scope: 'thread',
    limit: 100,
  });
  return own.some(opensThread);
}
