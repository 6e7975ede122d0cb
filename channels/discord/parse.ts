import { MalformedEventError } from '../../src/errors.js';
import type { PostPlace } from '../../src/posts.js';
import type {
  ConversationScope,
  MessageDeletion,
  MessageEdit,
  NewMessage,
} from '../../src/types.js';
import { discordAttachments } from './attachments.js';

/**
 * Pure functions from Discord gateway payloads (MESSAGE_CREATE / MESSAGE_UPDATE /
 * MESSAGE_DELETE, API v10, snake_case as in Discord's documentation) to colloquy turns. They
 * load no SDK; `DiscordChannel` looks up what a payload lacks (the channel's type, name and,
 * for threads, parent) and passes it in `DiscordParseContext`.
 *
 * Ids, deterministic so SQL users can find them:
 * - participant `discord:<user id>`
 * - conversation `discord:dm:<channel>` (DM), `discord:<guild>:<channel>` (guild channel),
 *   `discord:<guild>:<parent channel>:<thread>` (thread)
 * - message `discord:<channel the message is in>:<message id>`
 *
 * Content is kept exactly as Discord sent it (`<@80351110224678912> hi`); mentions of users
 * (`<@id>`, `<@!id>` and the payload's `mentions`) become participant ids in
 * `metadata.mentions`. Role mentions (`<@&id>`) and `@everyone` / `@here` are not mentions of
 * anyone in particular and are not resolved.
 */

/** Discord channel types colloquy distinguishes. */
export const DISCORD_CHANNEL_TYPES = {
  GUILD_TEXT: 0,
  DM: 1,
  GROUP_DM: 3,
  ANNOUNCEMENT_THREAD: 10,
  PUBLIC_THREAD: 11,
  PRIVATE_THREAD: 12,
} as const;

const THREAD_TYPES: ReadonlySet<number> = new Set([10, 11, 12]);
const DM_TYPES: ReadonlySet<number> = new Set([1, 3]);
/** Message types that carry something someone said: DEFAULT (0) and REPLY (19). */
const CONVERSATION_MESSAGE_TYPES: ReadonlySet<number> = new Set([0, 19]);

/** What the channel knows about the Discord channel an event happened in. */
export interface DiscordChannelInfo {
  /** Discord channel type (0 guild text, 1 DM, 11 public thread, …). */
  type: number;
  name?: string;
  /** For threads: the channel the thread hangs off. */
  parentId?: string;
  parentName?: string;
}

export interface DiscordParseContext {
  /** The bot's own Discord user id (from READY); its own messages are ignored. */
  botUserId: string | undefined;
  /**
   * The user ids of the bot's other Discord bots: their messages and edits are the bot's own
   * too (each bot hears what the others post in a guild they share).
   */
  siblings?: readonly string[];
  /** The channel the event happened in, when known. */
  channel?: DiscordChannelInfo;
  /** Clock for deletions, which Discord does not timestamp (default: now). */
  now?: () => Date;
}

/** A MESSAGE_CREATE colloquy has nothing to do with, and why. */
export interface DiscordIgnored {
  ignored: string;
}

/** Where a Discord channel id puts a turn. */
export interface DiscordPlace {
  conversationId: string;
  scope: ConversationScope;
  /** The guild channel (a thread's parent), or the DM channel. */
  channelId: string;
  threadId?: string;
  channelName?: string;
  threadName?: string;
}

/**
 * Parses a MESSAGE_CREATE `d`. Throws `MalformedEventError` when the payload lacks what every
 * message has (id, channel_id, author.id, content, timestamp).
 *
 * @example
 * ```ts
 * const turn = parseMessageCreate(payload.d, { botUserId: '1100000000000000001', channel: { type: 0, name: 'general' } });
 * if (!('ignored' in turn)) await handlers.message(turn);
 * ```
 */
export function parseMessageCreate(
  data: unknown,
  context: DiscordParseContext,
): NewMessage | DiscordIgnored {
  const d = record(data, 'MESSAGE_CREATE');
  const id = snowflake(d.id, 'id');
  const channelId = snowflake(d.channel_id, 'channel_id');
  const author = record(d.author, 'MESSAGE_CREATE author');
  const authorId = snowflake(author.id, 'author.id');
  const content = d.content;
  if (typeof content !== 'string') throw malformed('MESSAGE_CREATE without string content', d);
  const timestamp = isoTime(d.timestamp, 'timestamp');
  const type = d.type === undefined ? 0 : d.type;
  if (typeof type !== 'number') throw malformed('MESSAGE_CREATE with a non-numeric type', d);

  if (isOurs(authorId, context)) return { ignored: 'our own message' };
  if (!CONVERSATION_MESSAGE_TYPES.has(type)) return { ignored: `message type ${type}` };

  const guildId = optionalSnowflake(d.guild_id, 'guild_id');
  const place = discordPlace({ channelId, guildId, channelTypeHint: d.channel_type }, context);
  const isBot = author.bot === true || typeof d.webhook_id === 'string';
  const kind = author.system === true ? 'system' : isBot ? 'agent' : 'user';
  const member =
    d.member && typeof d.member === 'object' ? (d.member as Record<string, unknown>) : {};
  const displayName = firstString(member.nick, author.global_name, author.username);

  const reply = type === 19 ? replyOf(d) : {};
  const attachments = discordAttachments(d);

  return {
    id: `discord:${channelId}:${id}`,
    conversationId: place.conversationId,
    participant: {
      kind,
      id: participantId(authorId),
      ...(displayName !== undefined && { displayName }),
    },
    content,
    timestamp,
    scope: place.scope,
    metadata: {
      channelType: 'discord',
      channelId: place.channelId,
      ...(place.channelName !== undefined && { channelName: place.channelName }),
      ...(place.threadId !== undefined && { threadId: place.threadId }),
      ...(place.threadName !== undefined && { threadName: place.threadName }),
      ...(guildId !== undefined && { guildId }),
      messageId: id,
      mentions: mentionsOf(content, d.mentions),
      ...reply,
    },
    ...(attachments.length > 0 && { attachments }),
  };
}

/**
 * Parses a MESSAGE_UPDATE `d` into an edit, or `undefined` when the update is not a change of
 * text (Discord also sends updates when embeds unfurl or a message is pinned; only updates
 * with `content` and an `edited_timestamp` are edits) or is the bot's own edit (a reply growing
 * as it streams): the store has the reply as the agent wrote it.
 *
 * @example
 * ```ts
 * const edit = parseMessageUpdate(payload.d, { botUserId, channel });
 * if (edit) await handlers.edit(edit);
 * ```
 */
export function parseMessageUpdate(
  data: unknown,
  context: DiscordParseContext,
): MessageEdit | undefined {
  const d = record(data, 'MESSAGE_UPDATE');
  const id = snowflake(d.id, 'id');
  const channelId = snowflake(d.channel_id, 'channel_id');
  if (typeof d.content !== 'string' || d.edited_timestamp == null) return undefined;
  const author = d.author && typeof d.author === 'object' ? (d.author as { id?: unknown }) : {};
  if (typeof author.id === 'string' && isOurs(author.id, context)) return undefined;
  const guildId = optionalSnowflake(d.guild_id, 'guild_id');
  const place = discordPlace({ channelId, guildId, channelTypeHint: d.channel_type }, context);
  return {
    channelType: 'discord',
    channelId: place.channelId,
    messageId: id,
    content: d.content,
    editedAt: isoTime(d.edited_timestamp, 'edited_timestamp'),
  };
}

/**
 * Parses a MESSAGE_DELETE `d` (`{ id, channel_id, guild_id? }`) into a deletion.
 *
 * @example
 * ```ts
 * await handlers.delete(parseMessageDelete(payload.d, { botUserId, channel }));
 * ```
 */
export function parseMessageDelete(data: unknown, context: DiscordParseContext): MessageDeletion {
  const d = record(data, 'MESSAGE_DELETE');
  const id = snowflake(d.id, 'id');
  const channelId = snowflake(d.channel_id, 'channel_id');
  const guildId = optionalSnowflake(d.guild_id, 'guild_id');
  const place = discordPlace({ channelId, guildId, channelTypeHint: undefined }, context);
  return {
    channelType: 'discord',
    channelId: place.channelId,
    messageId: id,
    deletedAt: (context.now?.() ?? new Date()).toISOString(),
  };
}

/**
 * Parses a MESSAGE_DELETE_BULK `d` (`{ ids, channel_id, guild_id? }`, what a moderator's bulk
 * delete sends) into one deletion per message, in the order of `ids`.
 *
 * @example
 * ```ts
 * for (const deletion of parseMessageDeleteBulk(payload.d, { botUserId, channel })) {
 *   await handlers.delete(deletion);
 * }
 * ```
 */
export function parseMessageDeleteBulk(
  data: unknown,
  context: DiscordParseContext,
): MessageDeletion[] {
  const d = record(data, 'MESSAGE_DELETE_BULK');
  if (!Array.isArray(d.ids)) throw malformed('MESSAGE_DELETE_BULK without an ids array', d);
  const ids = d.ids.map((id: unknown) => snowflake(id, 'ids[]'));
  const channelId = snowflake(d.channel_id, 'channel_id');
  const guildId = optionalSnowflake(d.guild_id, 'guild_id');
  const place = discordPlace({ channelId, guildId, channelTypeHint: undefined }, context);
  const deletedAt = (context.now?.() ?? new Date()).toISOString();
  return ids.map((messageId) => ({
    channelType: 'discord',
    channelId: place.channelId,
    messageId,
    deletedAt,
  }));
}

/**
 * Where a message in `channelId` belongs: scope, conversation id, and the channel / thread ids
 * stored in metadata. A DM has no guild; a thread lives under its parent channel (a thread
 * whose parent is unknown is treated as a channel of its own).
 *
 * @example
 * ```ts
 * discordPlace({ channelId: '222', guildId: '81384788765712384' }, { botUserId, channel: { type: 11, parentId: '111' } });
 * // { conversationId: 'discord:81384788765712384:111:222', scope: 'thread', channelId: '111', threadId: '222' }
 * ```
 */
export function discordPlace(
  at: { channelId: string; guildId: string | undefined; channelTypeHint?: unknown },
  context: Pick<DiscordParseContext, 'channel'>,
): DiscordPlace {
  const info = context.channel;
  const hint = typeof at.channelTypeHint === 'number' ? at.channelTypeHint : undefined;
  const type = info?.type ?? hint ?? (at.guildId === undefined ? DISCORD_CHANNEL_TYPES.DM : 0);
  const name = info?.name;
  if (at.guildId === undefined || DM_TYPES.has(type)) {
    return {
      conversationId: `discord:dm:${at.channelId}`,
      scope: 'dm',
      channelId: at.channelId,
      ...(name !== undefined && { channelName: name }),
    };
  }
  if (THREAD_TYPES.has(type) && info?.parentId !== undefined) {
    return {
      conversationId: `discord:${at.guildId}:${info.parentId}:${at.channelId}`,
      scope: 'thread',
      channelId: info.parentId,
      threadId: at.channelId,
      ...(info.parentName !== undefined && { channelName: info.parentName }),
      ...(name !== undefined && { threadName: name }),
    };
  }
  return {
    conversationId: `discord:${at.guildId}:${at.channelId}`,
    scope: 'channel',
    channelId: at.channelId,
    ...(name !== undefined && { channelName: name }),
  };
}

/**
 * True for a guild message that carries nothing at all: no text, attachment, embed, sticker or
 * poll. Discord sends those when the bot lacks the privileged Message Content intent.
 *
 * @example
 * ```ts
 * if (lacksContent(payload.d)) console.warn('Enable the Message Content Intent');
 * ```
 */
export function lacksContent(data: unknown): boolean {
  const d = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
  const empty = (value: unknown) => !Array.isArray(value) || value.length === 0;
  return (
    d.content === '' &&
    typeof d.guild_id === 'string' &&
    empty(d.attachments) &&
    empty(d.embeds) &&
    empty(d.sticker_items) &&
    empty(d.components) &&
    d.poll === undefined
  );
}

/** Whether `authorId` is the bot's, through this Discord bot or a sibling. */
function isOurs(authorId: string, context: DiscordParseContext): boolean {
  return authorId === context.botUserId || context.siblings?.includes(authorId) === true;
}

/** `discord:<user id>`, the participant id of a Discord user. */
export function participantId(userId: string): string {
  return `discord:${userId}`;
}

/** Participant ids mentioned: `<@id>` / `<@!id>` in the text first, then the payload's `mentions`. */
export function mentionsOf(content: string, mentions?: unknown): string[] {
  const ids = [...content.matchAll(/<@!?(\d{15,25})>/g)].map((match) => match[1] ?? '');
  if (Array.isArray(mentions)) {
    for (const user of mentions) {
      const id = (user as { id?: unknown } | null)?.id;
      if (typeof id === 'string') ids.push(id);
    }
  }
  return [...new Set(ids.filter((id) => id !== ''))].map(participantId);
}

function replyOf(d: Record<string, unknown>): {
  replyToMessageId?: string;
  replyToParticipantId?: string;
} {
  const reference = d.message_reference as { message_id?: unknown; type?: unknown } | undefined;
  if (typeof reference?.message_id !== 'string') return {};
  if (reference.type !== undefined && reference.type !== 0) return {}; // 1 = forward, not a reply
  const referenced = d.referenced_message as { author?: { id?: unknown } } | null | undefined;
  const authorId = referenced?.author?.id;
  return {
    replyToMessageId: reference.message_id,
    ...(typeof authorId === 'string' && { replyToParticipantId: participantId(authorId) }),
  };
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw malformed(`${what} is not an object`, value);
  }
  return value as Record<string, unknown>;
}

function snowflake(value: unknown, field: string): string {
  if (typeof value !== 'string' || !/^\d{1,25}$/.test(value)) {
    throw malformed(`Discord payload field ${field} is not a snowflake`, value);
  }
  return value;
}

function optionalSnowflake(value: unknown, field: string): string | undefined {
  return value === undefined || value === null ? undefined : snowflake(value, field);
}

function isoTime(value: unknown, field: string): string {
  const date = typeof value === 'string' ? new Date(value) : undefined;
  if (!date || Number.isNaN(date.getTime())) {
    throw malformed(`Discord payload field ${field} is not a timestamp`, value);
  }
  return date.toISOString();
}

function firstString(...values: unknown[]): string | undefined {
  return values.find((value): value is string => typeof value === 'string' && value !== '');
}

function malformed(message: string, payload: unknown): MalformedEventError {
  return new MalformedEventError(message, { cause: { payload } });
}

/**
 * Where a post into a Discord conversation goes, read from its id (`discordPlace`'s scheme):
 * `discord:dm:<channel>`, `discord:<guild>:<channel>` or `discord:<guild>:<parent>:<thread>`;
 * undefined for any other id.
 *
 * @example
 * ```ts
 * discordPostPlace('discord:81384788765712384:111:222'); // { scope: 'thread', channelId: '111', threadId: '222', … }
 * ```
 */
export function discordPostPlace(conversationId: string): PostPlace | undefined {
  const dm = /^discord:dm:(\d+)$/.exec(conversationId);
  if (dm) return { conversationId, scope: 'dm', channelId: dm[1]! };
  const [, , channelId, threadId] = /^discord:(\d+):(\d+)(?::(\d+))?$/.exec(conversationId) ?? [];
  if (channelId === undefined) return undefined;
  if (threadId === undefined) return { conversationId, scope: 'channel', channelId };
  return { conversationId, scope: 'thread', channelId, threadId };
}
