import type { ScheduledPost } from '../src/posts.js';
import type { MessageAttachment } from '../src/attachments.js';
import type {
  ConversationScope,
  MessageMetadata,
  MessageSource,
  NewMessage,
  ParticipantKind,
  StoredMessage,
} from '../src/types.js';

/**
 * Mapping between `StoredMessage` and the `messages` row. Metadata keys that have their own
 * column live there (so SQL can use them); everything else goes to the `metadata` JSON.
 */

/**
 * A row as a store's message columns select it (`MESSAGE_COLUMNS` in SQLite,
 * `PG_MESSAGE_COLUMNS` in Postgres).
 *
 * @example
 * ```ts
 * const row = statement.get(id) as SelectedMessageRow | undefined;
 * ```
 */
export interface SelectedMessageRow {
  seq: number;
  id: string;
  conversation_id: string;
  participant_id: string;
  kind: ParticipantKind;
  display_name: string | null;
  content: string;
  timestamp: string;
  scope: ConversationScope;
  channel_type: string;
  channel_id: string;
  thread_id: string | null;
  platform_message_id: string | null;
  reply_to_message_id: string | null;
  reply_to_participant_id: string | null;
  is_summary: number;
  summary_for_agent_id: string | null;
  edited_at: string | null;
  deleted_at: string | null;
  delivery: StoredMessage['delivery'] | null;
  metadata: string;
  mentions: string;
  trace_id: string | null;
  sources: string | null;
  reasoning: string | null;
  delegation_id: string | null;
  delegated_by: string | null;
  delegated_to: string | null;
  attachments: string | null;
}

/** The names of `MESSAGE_COLUMNS`, in order; `fromValues` reads the same positions by index. */
export const MESSAGE_COLUMN_NAMES = [
  'seq',
  'id',
  'conversation_id',
  'participant_id',
  'kind',
  'display_name',
  'content',
  'timestamp',
  'scope',
  'channel_type',
  'channel_id',
  'thread_id',
  'platform_message_id',
  'reply_to_message_id',
  'reply_to_participant_id',
  'is_summary',
  'summary_for_agent_id',
  'edited_at',
  'deleted_at',
  'metadata',
  'mentions',
  'trace_id',
  'sources',
  'reasoning',
  'delegation_id',
  'delegated_by',
  'delegated_to',
  'delivery',
  'attachments',
] as const satisfies readonly (keyof SelectedMessageRow)[];

/**
 * The row of a statement read in raw mode (`statement.raw()`: arrays, in `MESSAGE_COLUMNS`
 * order), which better-sqlite3 returns much faster than objects.
 *
 * @example
 * ```ts
 * const turns = (statement.raw().all(params) as unknown[][]).map((v) => toMessage(fromValues(v)));
 * ```
 */
export function fromValues(v: unknown[]): SelectedMessageRow {
  return {
    seq: v[0],
    id: v[1],
    conversation_id: v[2],
    participant_id: v[3],
    kind: v[4],
    display_name: v[5],
    content: v[6],
    timestamp: v[7],
    scope: v[8],
    channel_type: v[9],
    channel_id: v[10],
    thread_id: v[11],
    platform_message_id: v[12],
    reply_to_message_id: v[13],
    reply_to_participant_id: v[14],
    is_summary: v[15],
    summary_for_agent_id: v[16],
    edited_at: v[17],
    deleted_at: v[18],
    metadata: v[19],
    mentions: v[20],
    trace_id: v[21],
    sources: v[22],
    reasoning: v[23],
    delegation_id: v[24],
    delegated_by: v[25],
    delegated_to: v[26],
    delivery: v[27],
    attachments: v[28],
  } as SelectedMessageRow;
}

/** Metadata keys stored in their own columns, not in the JSON. */
const COLUMN_KEYS = new Set([
  'channelType',
  'channelId',
  'threadId',
  'messageId',
  'mentions',
  'replyToMessageId',
  'replyToParticipantId',
  'isSummary',
  'summaryForAgentId',
]);

/** Metadata keys with a text column of their own, used when the value is a string. */
const TEXT_COLUMN_KEYS = new Set(['reasoning', 'delegationId', 'delegatedBy', 'delegatedTo']);

function textKey(meta: MessageMetadata, key: string): string | null {
  const value = meta[key];
  return typeof value === 'string' ? value : null;
}

/**
 * The bound parameters of the message insert.
 *
 * @example
 * ```ts
 * insertMessage.run(toInsert(turn, turn.timestamp) satisfies MessageInsert);
 * ```
 */
export interface MessageInsert {
  id: string;
  conversationId: string;
  participantId: string;
  content: string;
  timestamp: string;
  scope: ConversationScope;
  channelType: string;
  channelId: string;
  threadId: string | null;
  platformMessageId: string | null;
  replyToMessageId: string | null;
  replyToParticipantId: string | null;
  isSummary: number;
  summaryForAgentId: string | null;
  metadata: string;
  traceId: string | null;
  sources: string | null;
  /** The turn's attachments as a JSON array (one row each in the `message_attachments` view). */
  attachments: string | null;
  reasoning: string | null;
  delegationId: string | null;
  delegatedBy: string | null;
  delegatedTo: string | null;
  /** `'sending'` for a reply recorded before its platform call; NULL for every other turn. */
  delivery: 'sending' | null;
  /** The kind the author wrote this turn as (SQLite's `author_kind`). */
  authorKind: ParticipantKind;
}

/**
 * The `messages` row for a new turn (timestamp already normalized); `delivery` is `'sending'`
 * for a reply recorded before its platform call.
 *
 * @example
 * ```ts
 * const row = toInsert(turn, normalizeTimestamp(turn.timestamp));
 * ```
 */
export function toInsert(
  message: NewMessage,
  timestamp: string,
  delivery: MessageInsert['delivery'] = null,
): MessageInsert {
  const meta = message.metadata;
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(meta)) {
    if (COLUMN_KEYS.has(key) || value === undefined) continue;
    if (TEXT_COLUMN_KEYS.has(key) && typeof value === 'string') continue;
    rest[key] = value;
  }
  // A turn stored without `mentions` reads back without it: the JSON says so.
  if (meta.mentions === undefined) rest['mentions'] = null;
  return {
    id: message.id,
    conversationId: message.conversationId,
    participantId: message.participant.id,
    authorKind: message.participant.kind,
    content: message.content,
    timestamp,
    scope: message.scope,
    channelType: meta.channelType,
    channelId: meta.channelId,
    threadId: meta.threadId ?? null,
    platformMessageId: meta.messageId ?? null,
    replyToMessageId: meta.replyToMessageId ?? null,
    replyToParticipantId: meta.replyToParticipantId ?? null,
    isSummary: meta.isSummary === true ? 1 : 0,
    summaryForAgentId: meta.summaryForAgentId ?? null,
    metadata: JSON.stringify(rest),
    traceId: message.traceId ?? null,
    sources: message.sources?.length ? JSON.stringify(message.sources) : null,
    attachments: message.attachments?.length ? JSON.stringify(message.attachments) : null,
    reasoning: textKey(meta, 'reasoning'),
    delegationId: textKey(meta, 'delegationId'),
    delegatedBy: textKey(meta, 'delegatedBy'),
    delegatedTo: textKey(meta, 'delegatedTo'),
    delivery,
  };
}

/**
 * The turn a selected row describes; absent values stay absent (no `undefined` keys).
 *
 * @example
 * ```ts
 * const turns = (statement.all(params) as SelectedMessageRow[]).map(toMessage);
 * ```
 */
export function toMessage(row: SelectedMessageRow): StoredMessage {
  // The parsed JSON object becomes the metadata itself, its keys set in place: spreading it
  // into a new object would cost most of a get's time.
  const parsed: unknown = JSON.parse(row.metadata);
  const metadata = (
    parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {}
  ) as MessageMetadata;
  metadata.channelType = row.channel_type;
  metadata.channelId = row.channel_id;
  if (metadata.mentions === null && row.mentions === '[]') delete metadata.mentions;
  else metadata.mentions = row.mentions === '[]' ? [] : (JSON.parse(row.mentions) as string[]);
  if (row.thread_id !== null) metadata.threadId = row.thread_id;
  if (row.platform_message_id !== null) metadata.messageId = row.platform_message_id;
  if (row.reply_to_message_id !== null) metadata.replyToMessageId = row.reply_to_message_id;
  if (row.reply_to_participant_id !== null) {
    metadata.replyToParticipantId = row.reply_to_participant_id;
  }
  if (row.is_summary === 1) metadata.isSummary = true;
  if (row.summary_for_agent_id !== null) metadata.summaryForAgentId = row.summary_for_agent_id;
  if (row.reasoning !== null) metadata['reasoning'] = row.reasoning;
  if (row.delegation_id !== null) metadata['delegationId'] = row.delegation_id;
  if (row.delegated_by !== null) metadata['delegatedBy'] = row.delegated_by;
  if (row.delegated_to !== null) metadata['delegatedTo'] = row.delegated_to;
  const message: StoredMessage = {
    id: row.id,
    conversationId: row.conversation_id,
    participant:
      row.display_name === null
        ? { kind: row.kind, id: row.participant_id }
        : { kind: row.kind, id: row.participant_id, displayName: row.display_name },
    content: row.content,
    timestamp: row.timestamp,
    scope: row.scope,
    metadata,
    sequence: row.seq,
  };
  if (row.edited_at !== null) message.editedAt = row.edited_at;
  if (row.deleted_at !== null) message.deletedAt = row.deleted_at;
  if (row.trace_id !== null) message.traceId = row.trace_id;
  if (row.sources !== null) message.sources = JSON.parse(row.sources) as MessageSource[];
  if (row.attachments != null) {
    message.attachments = JSON.parse(row.attachments) as MessageAttachment[];
  }
  if (row.delivery != null) message.delivery = row.delivery;
  return message;
}

export { normalizeTimestamp } from '../src/timestamp.js';

/** A `scheduled_posts` row as the stores read it (JSON as text or parsed). */
export interface PostRow extends Omit<ScheduledPost, 'message' | 'participant'> {
  message: string;
  participant: string;
}

/** A row read back: JSON parsed, and no key for a NULL column. */
export function postOf(row: PostRow): ScheduledPost {
  const post: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) if (value !== null) post[key] = value;
  return {
    ...(post as unknown as ScheduledPost),
    message: typeof row.message === 'string' ? JSON.parse(row.message) : row.message,
    participant:
      typeof row.participant === 'string' ? JSON.parse(row.participant) : row.participant,
  };
}
