import type { BotOptions } from 'colloquy';
import { TelegramChannel, type TelegramChannelOptions } from 'colloquy/telegram';
import type { FakeTelegram } from 'colloquy/testing';
import { startedBot, type StartedBot } from '../../fixtures/started-bot.js';

/**
 * A started bot on a Telegram channel long-polling `telegram` (see `startedBot`), with that
 * channel.
 *
 * @example
 * ```ts
 * const { bot, errors } = await startTelegramBot(telegram, { store }, { retry: { baseDelayMs: 5 } });
 * ```
 */
export async function startTelegramBot(
  telegram: FakeTelegram,
  options: Partial<BotOptions> = {},
  channelOptions: Partial<TelegramChannelOptions> = {},
): Promise<StartedBot & { channel: TelegramChannel }> {
  const channel = new TelegramChannel({
    token: telegram.token,
    client: { apiRoot: telegram.apiRoot },
    pollingTimeoutSeconds: 5,
    ...channelOptions,
  });
  return { ...(await startedBot(channel, options)), channel };
}
