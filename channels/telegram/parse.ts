/**
 * Pure functions that turn Telegram Bot API updates into colloquy turns. No I/O, no grammy
 * runtime: only its payload types.
 *
 * Ids (documented, so SQL users can find things):
 * - participant: `telegram:<user id>` (a channel or anonymous admin posting as a chat:
 *   `telegram:<sender_chat id>`); a mention of a user without a known id: `telegram:@username`
 *   (lowercased: Telegram usernames are case-insensitive)
 * - conversation: `telegram:<chat_id>`, or `telegram:<chat_id>:<message_thread_id>` in a forum topic
 * - message: `telegram:<chat_id>:<message_id>`; `metadata.messageId` is the bare `message_id`
 *
 * @example
 * ```ts
 * import { parseUpdate } from 'colloquy/telegram';
 * const parsed = parseUpdate(update, { id: 99, username: 'orders_bot' });
 * if (parsed.kind === 'message') await handlers.message(parsed.message);
 * ```
 */
import type { Chat, Message, MessageEntity, Update, User } from 'grammy/types';
import type { PostPlace } from '../../src/posts.js';
import type {
  ConversationScope,
  Interaction,
  MessageEdit,
  NewMessage,
  Participant,
} from '../../src/types.js';
import { telegramAttachments } from './attachments.js';

/** What the parser needs to know about our own bot. */
export interface TelegramSelf {
  id: number;
  username?: string;
}

/** The outcome of parsing one update. */
export type ParsedUpdate =
  | { kind: 'message'; message: NewMessage }
  | { kind: 'edit'; edit: MessageEdit }
  /** Our own message, a service message, or an update type colloquy does not record. */
  | { kind: 'ignored'; reason: string }
  | { kind: 'malformed'; reason: string };

/** Media kinds recorded (with empty content) when a message has no text or caption. */
const MEDIA_KINDS = [
  'photo',
  'video',
  'animation',
  'audio',
  'voice',
  'video_note',
  'document',
  'sticker',
  'location',
  'venue',
  'contact',
  'poll',
  'dice',
] as const;

/**
 * Parses one update. Never throws: an update missing required fields is `malformed`.
 *
 * @example
 * ```ts
 * parseUpdate({ update_id: 1, message }, { id: 99, username: 'orders_bot' }).kind; // 'message'
 * ```
 */
export function parseUpdate(update: Update, self: TelegramSelf): ParsedUpdate {
  if (!isObject(update) || typeof update.update_id !== 'number') {
    return { kind: 'malformed', reason: 'update without a numeric update_id' };
  }
  const message = update.message ?? update.channel_post ?? update.business_message;
  if (message !== undefined) return parseMessage(message, self);
  const edited =
    update.edited_message ?? update.edited_channel_post ?? update.edited_business_message;
  if (edited !== undefined) return parseEdit(edited, self);
  const type = Object.keys(update).find((key) => key !== 'update_id') ?? 'empty';
  return { kind: 'ignored', reason: `update type ${type} is not recorded` };
}

/**
 * Parses a message (from `message` or `channel_post`) into a new turn.
 *
 * @example
 * ```ts
 * const parsed = parseMessage(update.message, { id: 99, username: 'orders_bot' });
 * ```
 */
export function parseMessage(message: Message, self: TelegramSelf): ParsedUpdate {
  const problem = missingFields(message);
  if (problem !== undefined) return { kind: 'malformed', reason: problem };
  if (message.from?.id === self.id) return { kind: 'ignored', reason: 'our own message' };

  const content = message.text ?? message.caption;
  const media = MEDIA_KINDS.find((kind) => message[kind] !== undefined);
  if (content === undefined && media === undefined) {
    return { kind: 'ignored', reason: 'service message without text' };
  }
  const chat = message.chat;
  const topic = topicId(message);
  const reply = replyTarget(message, topic);
  const metadata: NewMessage['metadata'] = {
    channelType: 'telegram',
    channelId: String(chat.id),
    messageId: String(message.message_id),
    mentions: resolveMentions(
      content ?? '',
      message.entities ?? message.caption_entities ?? [],
      self,
    ),
  };
  const channelName = chatName(chat);
  if (channelName !== undefined) metadata.channelName = channelName;
  if (topic !== undefined) metadata.threadId = String(topic);
  if (reply !== undefined) {
    metadata.replyToMessageId = String(reply.message_id);
    const author = reply.sender_chat ?? reply.from;
    if (author !== undefined) metadata.replyToParticipantId = participantId(author.id);
  }
  if (content === undefined && media !== undefined) metadata.media = media;
  const command = commandOf(content ?? '', message.entities ?? [], self);
  if (command !== undefined) metadata.interaction = command;
  const attachments = telegramAttachments(message);

  return {
    kind: 'message',
    message: {
      id: messageId(chat.id, message.message_id),
      conversationId: conversationId(chat.id, topic),
      participant: author(message, self),
      content: content ?? '',
      timestamp: unixToIso(message.date),
      scope: scopeOf(chat, topic),
      metadata,
      ...(attachments.length > 0 && { attachments }),
    },
  };
}

/**
 * Parses an edited message into an edit of the stored turn.
 *
 * @example
 * ```ts
 * const parsed = parseEdit(update.edited_message, self); // { kind: 'edit', edit: { … } }
 * ```
 */
export function parseEdit(message: Message, self: TelegramSelf): ParsedUpdate {
  const problem = missingFields(message);
  if (problem !== undefined) return { kind: 'malformed', reason: problem };
  if (message.from?.id === self.id) return { kind: 'ignored', reason: 'our own edit' };
  const content = message.text ?? message.caption;
  if (content === undefined) return { kind: 'ignored', reason: 'edit without text' };
  return {
    kind: 'edit',
    edit: {
      channelType: 'telegram',
      channelId: String(message.chat.id),
      messageId: String(message.message_id),
      content,
      editedAt: unixToIso(message.edit_date ?? message.date),
    },
  };
}

/**
 * Participant ids mentioned in a text, from its entities. Offsets and lengths are UTF-16 code
 * units, which is exactly how JavaScript indexes strings, so `slice` is right even after emoji.
 * An entity whose span runs past the text (or is negative or empty) is ignored.
 *
 * @example
 * ```ts
 * resolveMentions('🎉 @orders_bot hi', [{ type: 'mention', offset: 3, length: 11 }], self);
 * // ['telegram:99']
 * ```
 */
export function resolveMentions(
  text: string,
  entities: readonly MessageEntity[],
  self: TelegramSelf,
): string[] {
  const ours = self.username?.toLowerCase();
  const mentions: string[] = [];
  for (const entity of entities) {
    if (!within(text, entity)) continue;
    let id: string | undefined;
    if (entity.type === 'text_mention' && entity.user !== undefined) {
      id = participantId(entity.user.id);
    } else if (entity.type === 'mention' || entity.type === 'bot_command') {
      const slice = text.slice(entity.offset, entity.offset + entity.length);
      const username = entity.type === 'mention' ? slice.replace(/^@/, '') : slice.split('@')[1]; // /cmd@bot
      if (username === undefined || username.length === 0) continue;
      const lower = username.toLowerCase();
      id = lower === ours ? participantId(self.id) : `telegram:@${lower}`;
    }
    if (id !== undefined && !mentions.includes(id)) mentions.push(id);
  }
  return mentions;
}

/** True when the entity's span (UTF-16 units) lies inside the text; others are ignored. */
function within(text: string, entity: MessageEntity): boolean {
  const { offset, length } = entity;
  return (
    Number.isInteger(offset) &&
    Number.isInteger(length) &&
    offset >= 0 &&
    length > 0 &&
    offset + length <= text.length
  );
}

/**
 * The command a message runs, when it opens with a `bot_command` entity addressed to no bot
 * or to this one (`/help@other_bot` is not ours).
 *
 * @example
 * ```ts
 * commandOf('/refund@orders_bot 4242', [{ type: 'bot_command', offset: 0, length: 18 }], self);
 * // { type: 'command', name: 'refund', args: '4242' }
 * ```
 */
export function commandOf(
  text: string,
  entities: readonly MessageEntity[],
  self: TelegramSelf,
): Interaction | undefined {
  const entity = entities.find((e) => e.type === 'bot_command' && e.offset === 0);
  if (entity === undefined || entity.length > text.length) return undefined;
  const [name = '', to] = text.slice(1, entity.length).split('@');
  if (to !== undefined && to.toLowerCase() !== self.username?.toLowerCase()) return undefined;
  return { type: 'command', name: name.toLowerCase(), args: text.slice(entity.length).trim() };
}

/** `telegram:<id>` for a user, bot or chat id. */
export function participantId(id: number | string): string {
  return `telegram:${id}`;
}

/** `telegram:<chat_id>[:<message_thread_id>]`. */
export function conversationId(chatId: number | string, threadId?: number | string): string {
  return threadId === undefined ? `telegram:${chatId}` : `telegram:${chatId}:${threadId}`;
}

/** `telegram:<chat_id>:<message_id>`. */
export function messageId(chatId: number | string, id: number | string): string {
  return `telegram:${chatId}:${id}`;
}

/** "First Last", or the username, or the id. */
export function displayName(user: Pick<User, 'first_name' | 'last_name' | 'username' | 'id'>) {
  const full = [user.first_name, user.last_name].filter((part) => part).join(' ');
  return full || user.username || String(user.id);
}

function author(message: Message, self: TelegramSelf): Participant {
  const chat = message.sender_chat;
  if (chat !== undefined) {
    // A channel post or an anonymous group admin: the chat is the author.
    return { kind: 'user', id: participantId(chat.id), displayName: chatName(chat) ?? '' };
  }
  const from = message.from as User; // checked by missingFields
  const kind = from.is_bot && from.id !== self.id ? 'agent' : 'user';
  return { kind, id: participantId(from.id), displayName: displayName(from) };
}

/** The forum topic a message belongs to, if any. */
export function topicId(message: Message): number | undefined {
  return message.is_topic_message === true && typeof message.message_thread_id === 'number'
    ? message.message_thread_id
    : undefined;
}

/**
 * The message replied to. In a forum topic, a message that is not an explicit reply still
 * carries `reply_to_message` pointing at the topic's creation message: that is not a reply.
 */
function replyTarget(message: Message, topic: number | undefined): Message | undefined {
  const reply = message.reply_to_message;
  if (reply === undefined) return undefined;
  if (topic !== undefined && (reply.message_id === topic || reply.forum_topic_created)) {
    return undefined;
  }
  return reply as Message;
}

export function scopeOf(chat: Chat, topic: number | undefined): ConversationScope {
  if (chat.type === 'private') return 'dm';
  return topic === undefined ? 'channel' : 'thread';
}

export function chatName(chat: Chat): string | undefined {
  const { title, first_name, last_name, username } = chat as Partial<Chat.PrivateChat> &
    Partial<Chat.GroupChat> & { id: number };
  if (title !== undefined) return title;
  if (first_name !== undefined) return displayName({ id: chat.id, first_name, last_name });
  return username;
}

/** A reason when a message lacks what every Telegram message has; undefined when fine. */
function missingFields(message: Message): string | undefined {
  if (!isObject(message)) return 'message is not an object';
  if (typeof message.message_id !== 'number') return 'message without message_id';
  if (typeof message.date !== 'number') return 'message without date';
  if (!isObject(message.chat) || typeof message.chat.id !== 'number') {
    return 'message without chat.id';
  }
  if (!['private', 'group', 'supergroup', 'channel'].includes(message.chat.type)) {
    return `message in a chat of unknown type ${String(message.chat.type)}`;
  }
  const sender = message.sender_chat ?? message.from;
  if (!isObject(sender) || typeof sender.id !== 'number') return 'message without from';
  return undefined;
}

function unixToIso(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

function isObject(value: unknown): value is Record<string, unknown> & object {
  return typeof value === 'object' && value !== null;
}

/**
 * Where a post into a Telegram conversation goes, read from its id (`telegram:<chat_id>` or
 * `telegram:<chat_id>:<topic>`): a private chat (a positive id, the person's user id) is a DM;
 * undefined for any other id.
 *
 * @example
 * ```ts
 * telegramPostPlace('telegram:42'); // { conversationId: 'telegram:42', scope: 'dm', channelId: '42' }
 * ```
 */
export function telegramPostPlace(conversationId: string): PostPlace | undefined {
  const [, channelId, threadId] = /^telegram:(-?\d+)(?::(\d+))?$/.exec(conversationId) ?? [];
  if (channelId === undefined) return undefined;
  if (threadId !== undefined) return { conversationId, scope: 'thread', channelId, threadId };
  return { conversationId, scope: Number(channelId) > 0 ? 'dm' : 'channel', channelId };
}
