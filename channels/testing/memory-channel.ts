import type {
  BotIdentity,
  Channel,
  ChannelHandlers,
  Delivery,
  OutboundMessage,
  SendOptions,
  SentMessage,
} from '../../src/channel.js';
import { ColloquyError } from '../../src/errors.js';
import { isoTimestamp } from '../../src/types.js';
import type {
  ChannelType,
  ConversationScope,
  Interaction,
  NewMessage,
  Participant,
} from '../../src/types.js';

export interface MemoryChannelOptions {
  /** Default `memory`. */
  type?: ChannelType;
  /** Platform channel id; the conversation is `<type>:<channelId>` (default `room`). */
  channelId?: string;
  /** Default `channel`. */
  scope?: ConversationScope;
  /** The bot's identity, reported after `start` (default `{ id: '<type>:bot', username: 'bot' }`). */
  identity?: BotIdentity;
}

/** Optional details of a turn delivered with `receive`. */
export interface ReceiveOptions {
  from?: Participant;
  /** Participant ids the turn mentions. */
  mentions?: string[];
  /** Platform message id (default: the next number). */
  messageId?: string;
  replyTo?: { messageId: string; participantId?: string };
  scope?: ConversationScope;
  /** A command or a press instead of text (`metadata.interaction`). */
  interaction?: Interaction;
  /** When it was sent (default: now). */
  timestamp?: string;
}

/**
 * A channel that lives in memory, for tests: `receive` delivers a turn as a platform would
 * (resolving when the bot has handled it, not only committed it) and `sent` lists every reply the bot posted.
 *
 * @example
 * ```ts
 * import { MemoryChannel } from 'colloquy/testing';
 * const channel = new MemoryChannel();
 * const bot = new Bot({ channels: [channel], agents: [agent], store });
 * await bot.start();
 * await channel.receive('hello @support-agent');
 * channel.sent[0]?.content;
 * ```
 */
export class MemoryChannel implements Channel {
  readonly type: ChannelType;
  readonly channelId: string;
  readonly conversationId: string;
  /** Every reply the bot sent, in order. */
  readonly sent: OutboundMessage[] = [];
  /** When set, `send` throws it (a platform refusing). */
  sendError: Error | undefined;
  /** How many parts of a split reply `send` posts before it throws `sendError` (0). */
  partsBeforeError = 0;
  readonly #scope: ConversationScope;
  readonly #identity: BotIdentity;
  #handlers: ChannelHandlers | undefined;
  #next = 0;

  constructor(options: MemoryChannelOptions = {}) {
    this.type = options.type ?? 'memory';
    this.channelId = options.channelId ?? 'room';
    this.conversationId = `${this.type}:${this.channelId}`;
    this.#scope = options.scope ?? 'channel';
    this.#identity = options.identity ?? { id: `${this.type}:bot`, username: 'bot' };
  }

  get botIdentity(): BotIdentity | undefined {
    return this.#handlers === undefined ? undefined : this.#identity;
  }

  async start(handlers: ChannelHandlers): Promise<void> {
    this.#handlers = handlers;
  }

  async stop(): Promise<void> {
    this.#handlers = undefined;
  }

  async send(message: OutboundMessage, options: SendOptions = {}): Promise<SentMessage> {
    if (this.sendError !== undefined) {
      const posted = Array.from({ length: this.partsBeforeError }, (_, i) => `out-part-${i + 1}`);
      for (let n = 1; n <= posted.length; n++) await options.partPosted?.(posted.slice(0, n));
      throw this.sendError;
    }
    if ((options.skipParts ?? 0) > 0) return { messageIds: [] }; // its one part went out already
    this.sent.push(message);
    return { messageIds: [`out-${++this.#next}`], timestamp: isoTimestamp() };
  }

  /** The turn `receive` would deliver, without delivering it. */
  turn(content: string, options: ReceiveOptions = {}): NewMessage {
    const messageId = options.messageId ?? `in-${++this.#next}`;
    const from = options.from ?? { kind: 'user', id: `${this.type}:alice`, displayName: 'Alice' };
    return {
      id: `${this.type}:${this.channelId}:${messageId}`,
      conversationId: this.conversationId,
      participant: from,
      content,
      timestamp: options.timestamp ?? isoTimestamp(),
      scope: options.scope ?? this.#scope,
      metadata: {
        channelType: this.type,
        channelId: this.channelId,
        messageId,
        mentions: options.mentions ?? [],
        ...(options.interaction && { interaction: options.interaction }),
        ...(options.replyTo && {
          replyToMessageId: options.replyTo.messageId,
          replyToParticipantId: options.replyTo.participantId,
        }),
      },
    };
  }

  /**
   * Delivers a turn to the bot and resolves once the bot committed it (what a platform's
   * acknowledgement waits for): `handled` resolves once it was answered.
   */
  async deliver(
    content: string,
    options: ReceiveOptions = {},
  ): Promise<{ message: NewMessage; handled: Promise<void> }> {
    const message = this.turn(content, options);
    const { handled } = await this.#started().message(message);
    return { message, handled };
  }

  /** Delivers a turn to the bot; resolves with it once the bot has handled it. */
  async receive(content: string, options: ReceiveOptions = {}): Promise<NewMessage> {
    const message = this.turn(content, options);
    await (
      await this.#started().message(message)
    ).handled;
    return message;
  }

  /** Delivers an edit of an earlier turn, made at `editedAt` (now unless given). */
  async edit(messageId: string, content: string, editedAt = isoTimestamp()): Promise<void> {
    const ref = { channelType: this.type, channelId: this.channelId, messageId };
    await (
      await this.#started().edit({ ...ref, content, editedAt })
    ).handled;
  }

  /** Delivers the deletion of an earlier turn. */
  async delete(messageId: string): Promise<void> {
    const ref = { channelType: this.type, channelId: this.channelId, messageId };
    await (
      await this.#started().delete({ ...ref, deletedAt: isoTimestamp() })
    ).handled;
  }

  /**
   * Delivers a reaction on a platform message (by `alice` unless `by` says who; `removed`: taken
   * back); resolves once the bot committed it, with `handled`.
   */
  async deliverReaction(
    messageId: string,
    reaction: string,
    options: { by?: string; removed?: boolean; byBot?: boolean } = {},
  ): Promise<Delivery> {
    const handler = this.#started().reaction;
    if (handler === undefined) throw new ColloquyError('the bot takes no reactions');
    return handler({
      channelType: this.type,
      channelId: this.channelId,
      messageId,
      participantId: options.by ?? `${this.type}:alice`,
      reaction,
      at: isoTimestamp(),
      ...(options.removed === true && { removed: true }),
      ...(options.byBot === true && { byBot: true }),
    });
  }

  /** Reports a problem the way a channel does (a malformed event…). */
  fail(error: ColloquyError): void {
    this.#started().error(error);
  }

  #started(): ChannelHandlers {
    if (this.#handlers === undefined) throw new ColloquyError('MemoryChannel is not started');
    return this.#handlers;
  }
}
