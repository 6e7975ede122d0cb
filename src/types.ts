import type { MessageAttachment } from './attachments.js';
import { StoreError } from './errors.js';

/**
 * The message model: what colloquy stores for every turn of every conversation.
 *
 * The minimal turn every store accepts and reads back unchanged (plus its `sequence`):
 * `id`, `conversationId`, `participant` (`kind`, `id`), `content`, `timestamp`, `scope` and
 * `metadata` with `channelType` and `channelId`; every other field is optional. A turn with
 * no `metadata`, or metadata without `channelType` or `channelId`, is accepted too: the missing
 * ones are stored as `channelType` taken from the conversation id's prefix (`telegram:42` →
 * `telegram`, else `custom`) and `channelId` the conversation id, and read back that way.
 *
 * @example
 * ```ts
 * import type { StoredMessage } from 'colloquy';
 * const turn: StoredMessage = {
 *   id: 'telegram:42:7',
 *   conversationId: 'telegram:42',
 *   participant: { kind: 'user', id: 'telegram:user:1001', displayName: 'Alice' },
 *   content: 'hello @orders_bot',
 *   timestamp: '2026-11-21T09:30:00.000Z',
 *   scope: 'dm',
 *   metadata: { channelType: 'telegram', channelId: '42', messageId: '7', mentions: ['telegram:user:99'] },
 * };
 * ```
 */

/** Who wrote a turn: a person, an agent (ours or another bot), or the system. */
export type ParticipantKind = 'user' | 'agent' | 'system';

export interface Participant {
  kind: ParticipantKind;
  /**
   * Stable id. Platform users are namespaced by the channel (`slack:U123`,
   * `discord:80351110224678912`, `telegram:1001`); our own agents use their agent id.
   */
  id: string;
  displayName?: string;
}

/** `dm`: one person and the bot; `channel`: a group space; `thread`: a thread or forum topic inside one. */
export type ConversationScope = 'channel' | 'dm' | 'thread';

/** The platform a turn came through. Open-ended so user-written channels can add their own. */
export type ChannelType = 'slack' | 'discord' | 'telegram' | 'console' | (string & {});

export interface MessageMetadata {
  channelType: ChannelType;
  /** Human name of the channel or chat, when the platform gives one. */
  channelName?: string;
  /** Platform id of the channel / chat the turn was posted in. */
  channelId: string;
  /** Platform thread id (Slack `thread_ts`, Discord thread channel id, Telegram `message_thread_id`). */
  threadId?: string;
  /**
   * The bot identity id (`slack:U0BOTTWO`) of the channel the turn came through, kept when the
   * bot runs several channels of its platform (two Slack apps in one workspace know the same
   * conversation ids): a turn answered later (resumed, settled, reacted to) goes through that
   * channel. Replies carry their turn's.
   */
  via?: string;
  /** Platform message id (Slack `ts`, Discord snowflake, Telegram `message_id`). */
  messageId?: string;
  /** Every further platform id when one reply was split into several platform messages. */
  partMessageIds?: string[];
  /**
   * Participant ids mentioned in the turn (already resolved from platform mention syntax).
   * Optional: a turn without it mentions no one, and stores read it back without it.
   */
  mentions?: string[];
  /** Platform message id this turn replies to. */
  replyToMessageId?: string;
  /** Participant id of the author of the message replied to, when known. */
  replyToParticipantId?: string;
  /**
   * The turn that opened this turn's thread, when it lives in another conversation (a Slack
   * thread's first message is in the channel's): a thread's prompt starts with it.
   */
  threadParent?: { conversationId: string; id: string };
  /**
   * On an agent's reply that hands the turn it answers to another agent by @mention: the ids
   * of the turns the new agent is shown with it, oldest first (the turns of earlier hand-offs
   * in the chain, the turn that started this one, the rows the handing agent recorded
   * answering it: its tool calls and results). Read from the same conversation only.
   */
  handoffTurns?: string[];
  /** True for rolling-summary rows written by a summarizer. */
  isSummary?: boolean;
  /** Agent id a summary row belongs to. */
  summaryForAgentId?: string;
  /** Sequence number of the newest turn a summary covers. */
  summaryThroughSequence?: number;
  /**
   * How many times the turn has been answered again after an edit (`rerunOnEdit`; 1 the
   * first time): set on the turn the agents get, never stored, so that each run's tool rows
   * get ids of their own (edit times can repeat within a second).
   */
  rerunForEdit?: number;
  /**
   * Set on a turn that is a slash command or a press on a reply's button or select (see
   * `Interaction`); absent on text.
   */
  interaction?: Interaction;
  /** Tool call / tool result linkage, for turns that record a model's tool use. */
  toolCallId?: string;
  toolName?: string;
  /** Anything else a channel or interceptor wants to keep; stored as JSON. */
  [key: string]: unknown;
}

/**
 * What a person did that is not text: ran a command (`/refund 4242`: name `refund`, args
 * `4242`) or pressed a button (or picked from a select) under a message the bot sent (`on`: its
 * platform id; `value`: the option picked, else the button's value). The bot adds who answers
 * it: `agent` (the command's agent, or the agent whose message was pressed), `handler` (a
 * command handled by its handler), or `refused` (why it is answered with one line and no agent:
 * an unknown command, a button on an unknown message, a press by someone the message was not
 * for, `used`: a press of the message's `once` buttons was answered first; `repeated`, a double
 * press, is answered not at all).
 *
 * @example
 * ```ts
 * const press: Interaction = { type: 'button', id: 'approve', value: 'approve', on: '4711' };
 * ```
 */
export type Interaction =
  | {
      type: 'command';
      name: string;
      args: string;
      agent?: string;
      handler?: true;
      refused?: string;
    }
  | {
      type: 'button';
      id: string;
      value: string;
      on: string;
      agent?: string;
      refused?: string;
      /**
       * The colloquy id of the message whose buttons the press uses: set on an answered press of
       * a `once` button. A store records one use per message, in the press's commit: a press whose
       * message another press used first is stored refused `used` (`refusedUse`).
       */
      uses?: string;
    };

/** A turn as colloquy stores it. */
export interface StoredMessage {
  /** colloquy id; channels derive it deterministically from the platform ids. */
  id: string;
  conversationId: string;
  participant: Participant;
  content: string;
  /** ISO 8601, UTC, millisecond precision (`2026-11-21T09:30:00.000Z`). */
  timestamp: string;
  scope: ConversationScope;
  metadata: MessageMetadata;
  /** Monotonic insertion sequence, assigned by the store. Absent before the first append. */
  sequence?: number;
  /** Set when the platform message was edited; the previous text is kept as a revision. */
  editedAt?: string;
  /** Set when the platform message was deleted (a tombstone: content is kept unless forgotten). */
  deletedAt?: string;
  /**
   * Which model call produced this turn, for an agent's reply: the AI SDK's response id (or
   * a trace id the agent sets), to find the call in a provider's or tracer's logs.
   */
  traceId?: string;
  /** What an agent's reply drew on (RAG citations), in the order given. */
  sources?: MessageSource[];
  /**
   * The files, images, voice notes, videos and stickers the turn carried, in the order the
   * platform gave them, as references (never the bytes); a caption is the turn's `content`.
   */
  attachments?: MessageAttachment[];
  /**
   * For a reply the bot sent through its outbox: `sending` (recorded, platform not yet
   * confirmed), `sent`, or `unconfirmed` (never confirmed; not sent again).
   */
  delivery?: 'sending' | 'sent' | 'unconfirmed' | 'failed';
}

/**
 * One document (or passage of one) a reply cites: set by a tool whose result carries
 * `sources`, or by the agent itself (`AgentResult.sources`).
 *
 * @example
 * ```ts
 * const source: MessageSource = { documentId: 'kb/refunds.md', name: 'Refund policy', chunk: '3', score: 0.82 };
 * ```
 */
export interface MessageSource {
  /** The document's id in your knowledge base (a path, a URL, a database key). */
  documentId: string;
  /** Its human name or title. */
  name?: string;
  /** Which part of it: a chunk id or number, or the passage itself. */
  chunk?: string;
  /** How relevant the retriever found it (higher is more relevant). */
  score?: number;
}

/** A message that has not been stored yet. */
export type NewMessage = Omit<StoredMessage, 'sequence' | 'editedAt' | 'deletedAt' | 'delivery'>;

/** Points at a platform message, for edits and deletes. */
export interface PlatformMessageRef {
  channelType: ChannelType;
  channelId: string;
  messageId: string;
}

export interface MessageEdit extends PlatformMessageRef {
  content: string;
  editedAt: string;
}

export interface MessageDeletion extends PlatformMessageRef {
  deletedAt: string;
}

/**
 * Where a turn was posted (platform, channel and its name, thread, the bot it came `via`) with
 * no mentions: the metadata to start another turn in the same place with (a reply, a tool row,
 * a summary).
 *
 * @example
 * ```ts
 * const reply = { ...inbound, id: 'r1', metadata: { ...samePlace(inbound), messageId: 'r1' } };
 * ```
 */
export function samePlace(
  message: Pick<NewMessage, 'metadata'>,
  place?: { threadId?: string },
): MessageMetadata {
  const { channelType, channelId, channelName, via } = message.metadata;
  const threadId = place === undefined ? message.metadata.threadId : place.threadId;
  return {
    channelType,
    channelId,
    ...(channelName === undefined ? {} : { channelName }),
    ...(threadId === undefined ? {} : { threadId }),
    ...(via === undefined ? {} : { via }),
    mentions: [],
  };
}

/**
 * The metadata a turn given none is stored with: `channelType` from the conversation id's
 * prefix (`telegram:42` → `telegram`; `custom` when it has none) and `channelId` the whole
 * conversation id.
 *
 * @example
 * ```ts
 * defaultMetadata('telegram:42'); // { channelType: 'telegram', channelId: 'telegram:42' }
 * ```
 */
export function defaultMetadata(conversationId: string): MessageMetadata {
  const colon = conversationId.indexOf(':');
  return {
    channelType: colon > 0 ? conversationId.slice(0, colon) : 'custom',
    channelId: conversationId,
  };
}

/**
 * The turn as every store keeps it: `metadata` missing, empty or partial is filled in (a
 * missing `channelType` or `channelId` from {@link defaultMetadata}, every field given kept),
 * and a turn no prompt could be built from (no participant, a participant without an `id`,
 * a `kind` other than `user`, `agent` or `system`) is refused with a one-line StoreError.
 *
 * @example
 * ```ts
 * withMetadata({ ...turn, conversationId: 'telegram:42', metadata: { mentions: ['telegram:9'] } })
 *   .metadata; // { channelType: 'telegram', channelId: 'telegram:42', mentions: ['telegram:9'] }
 * ```
 */
export function withMetadata<T extends NewMessage>(message: T): T {
  checkParticipant(message);
  const given = message.metadata as Partial<MessageMetadata> | null | undefined;
  if (typeof given?.channelType === 'string' && typeof given.channelId === 'string') {
    return message;
  }
  const defaults = defaultMetadata(message.conversationId);
  const metadata: MessageMetadata = {
    ...given,
    channelType: typeof given?.channelType === 'string' ? given.channelType : defaults.channelType,
    channelId: typeof given?.channelId === 'string' ? given.channelId : defaults.channelId,
  };
  return { ...message, metadata };
}

const PARTICIPANT_KINDS: readonly string[] = [
  'user',
  'agent',
  'system',
] satisfies ParticipantKind[];

function checkParticipant(message: NewMessage): void {
  const participant = message.participant as Partial<Participant> | null | undefined;
  const problem =
    participant === null || typeof participant !== 'object'
      ? 'has no participant'
      : typeof participant.id !== 'string' || participant.id === ''
        ? 'has a participant without an id'
        : !PARTICIPANT_KINDS.includes(participant.kind as string)
          ? `has a participant of kind ${JSON.stringify(participant.kind)}`
          : undefined;
  if (problem === undefined) return;
  throw new StoreError(
    `turn ${JSON.stringify(message.id)} ${problem}; a turn needs participant { kind: ` +
      `'user' | 'agent' | 'system', id }`,
    { conversationId: message.conversationId, messageId: message.id, transient: false },
  );
}

/** Formats a Date (default: now) the way colloquy stores timestamps. */
export function isoTimestamp(date: Date = new Date()): string {
  return date.toISOString();
}
