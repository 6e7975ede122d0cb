import type { ColloquyError } from './errors.js';
import type {
  ChannelType,
  ConversationScope,
  MessageDeletion,
  MessageEdit,
  NewMessage,
} from './types.js';

/** What a channel calls when something happens on its platform. Provided by the runtime. */
export interface ChannelHandlers {
  /** A new turn (people, other bots, never our own echoes). Resolves when the turn is handled. */
  message(message: NewMessage): Promise<void>;
  /** A platform message was edited. */
  edit(edit: MessageEdit): Promise<void>;
  /** A platform message was deleted. */
  delete(deletion: MessageDeletion): Promise<void>;
  /** Something went wrong that did not stop the channel (a malformed event, a refused send…). */
  error(error: ColloquyError): void;
}

/** Where a reply goes: derived from the inbound turn it answers. */
export interface OutboundMessage {
  conversationId: string;
  scope: ConversationScope;
  channelId: string;
  threadId?: string;
  /** Platform message id being answered; channels reply to it where the platform allows. */
  replyToMessageId?: string;
  content: string;
}

/**
 * Where the reply to a turn goes when it is not where the turn was: a channel decides (a
 * Slack channel message is answered in a thread of it, a conversation of its own).
 */
export interface ReplyPlace {
  conversationId: string;
  scope: ConversationScope;
  /** The platform thread to post in. */
  threadId?: string;
}

/** The platform's ids for what `send` posted, in order (a long reply may be split). */
export interface SentMessage {
  messageIds: string[];
  /**
   * The colloquy id of the first part, in the channel's own id scheme (the one its inbound
   * turns use). Defaults to `<channelType>:<channelId>:<first platform id>`.
   */
  id?: string;
  /** When the platform says it was posted (ISO 8601 UTC); defaults to now. */
  timestamp?: string;
}

/** The bot's own identity on a platform, known after `start`. Feeds agents' aliases. */
export interface BotIdentity {
  /** Participant id (namespaced like every participant id: `telegram:99`). */
  id: string;
  /** @username / handle without the @, where the platform has one. */
  username?: string;
  displayName?: string;
}

/**
 * A platform adapter. Everything platform-specific stays behind this.
 *
 * @example
 * ```ts
 * const channel = new TelegramChannel({ token: process.env.TELEGRAM_BOT_TOKEN! });
 * const bot = new Bot({ channels: [channel], agents: [new SupportAgent()] });
 * await bot.start();
 * ```
 */
export interface Channel {
  readonly type: ChannelType;
  start(handlers: ChannelHandlers): Promise<void>;
  stop(): Promise<void>;
  send(message: OutboundMessage): Promise<SentMessage>;
  /**
   * Where replies to `inbound` go, when not in its own conversation and thread (the default).
   *
   * @example
   * ```ts
   * const place = channel.replyPlace?.(inbound); // Slack: a thread of a channel mention
   * await channel.send(outboundFor(inbound, 'On it.', place));
   * ```
   */
  replyPlace?(inbound: NewMessage): ReplyPlace | undefined;
  /** Known after `start` resolves. */
  readonly botIdentity: BotIdentity | undefined;
}
