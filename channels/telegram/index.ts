/// <reference types="node" preserve="true" />
/**
 * `colloquy/telegram`: the Telegram channel, built on grammy (an optional peer dependency).
 *
 * @example
 * ```ts
 * import { Bot } from 'colloquy';
 * import { TelegramChannel } from 'colloquy/telegram';
 *
 * const telegram = new TelegramChannel({ token: process.env.TELEGRAM_BOT_TOKEN! });
 * const bot = new Bot({ channels: [telegram], agents: [new SupportAgent()] });
 * await bot.start();
 * ```
 */
export { TelegramChannel } from './channel.js';
export type { TelegramChannelOptions, TelegramWebhookOptions } from './channel.js';
export {
  conversationId,
  displayName,
  messageId,
  parseEdit,
  parseMessage,
  parseUpdate,
  participantId,
  resolveMentions,
} from './parse.js';
export type { ParsedUpdate, TelegramSelf } from './parse.js';
export {
  TELEGRAM_MESSAGE_LIMIT,
  chatIdValue,
  formatTelegram,
  refusedMarkup,
  retryTransformer,
  telegramParts,
  telegramPlainText,
  toColloquyError,
  toSendMessagePayloads,
} from './format.js';
export type { RetryOptions, SendMessagePayload, TelegramPart } from './format.js';
