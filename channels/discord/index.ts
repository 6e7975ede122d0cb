/// <reference types="node" preserve="true" />
// `colloquy/discord`: the Discord channel. Loads discord.js (an optional peer dependency);
// bots that do not use Discord never import this entry point.
export { DEFAULT_DISCORD_INTENTS, DiscordChannel, type DiscordChannelOptions } from './channel.js';
export { guardedSharding, type BrokenPacketHandler } from './guard.js';
export {
  DEFAULT_ALLOWED_MENTIONS,
  DISCORD_MESSAGE_LIMIT,
  formatDiscord,
  formatOutbound,
  toColloquyError,
  type DiscordAllowedMentions,
  type DiscordMessageBody,
  type DiscordOutbound,
} from './format.js';
export {
  DISCORD_CHANNEL_TYPES,
  discordPlace,
  lacksContent,
  mentionsOf,
  parseMessageCreate,
  parseMessageDelete,
  parseMessageDeleteBulk,
  parseMessageUpdate,
  participantId,
  type DiscordChannelInfo,
  type DiscordIgnored,
  type DiscordParseContext,
  type DiscordPlace,
} from './parse.js';
