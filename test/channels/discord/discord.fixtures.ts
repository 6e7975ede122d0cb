import type { BotOptions } from 'colloquy';
import { DiscordChannel, type DiscordChannelOptions } from 'colloquy/discord';
import type { FakeDiscord } from 'colloquy/testing';
import { startedBot, type StartedBot } from '../../fixtures/started-bot.js';

/** The test guild and its #general, as `addGeneral` sets them up. */
export const GUILD = '81384788765712384';
export const GENERAL = '290926798999357250';

/** Gives `discord` the test guild with its #general channel. */
export function addGeneral(discord: FakeDiscord): void {
  discord.addGuild({ id: GUILD, name: 'Test Guild', channels: [{ id: GENERAL, name: 'general' }] });
}

/**
 * A started bot on a Discord channel pointed at `discord`'s gateway and REST API (see
 * `startedBot`).
 *
 * @example
 * ```ts
 * const { bot, errors } = await startDiscordBot(discord, { store }, { commandGuildIds: [GUILD] });
 * ```
 */
export async function startDiscordBot(
  discord: FakeDiscord,
  options: Partial<BotOptions> = {},
  channelOptions: Partial<DiscordChannelOptions> = {},
): Promise<StartedBot> {
  const channel = new DiscordChannel({
    token: discord.token,
    clientOptions: { rest: { api: discord.restApi } },
    ...channelOptions,
  });
  return startedBot(channel, options);
}
