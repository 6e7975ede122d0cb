/**
 * A Discord bot that answers when mentioned, replied to or written to in a DM, and keeps
 * every conversation in SQLite.
 *
 *   DISCORD_BOT_TOKEN=... npx tsx examples/discord-bot.ts
 *
 * Environment:
 * - DISCORD_BOT_TOKEN  the token from Developer Portal → your application → Bot (required)
 * - DISCORD_API_URL    another REST API root (a FakeDiscord's `restApi`); the gateway URL
 *                      comes from its `GET /gateway/bot`
 * - DISCORD_SHARDS     how many gateway shards the bot runs (default 1; Discord requires one
 *                      per 2,500 servers); instances sharing a Postgres database split them
 * - COLLOQUY_DB        SQLite file (default ./colloquy.db)
 * - COLLOQUY_MODEL     e.g. openai:gpt-4o-mini; the offline model when unset
 *
 * Switch on "Message Content Intent" (Bot → Privileged Gateway Intents) or the bot reads
 * empty messages in servers. See docs/discord.md.
 */
import { BaseAgent, Bot } from 'colloquy';
import { DiscordChannel } from 'colloquy/discord';
import { exitWith, launch, modelOrExit, urlFromEnv } from './launch.js';

const token = process.env.DISCORD_BOT_TOKEN;
if (!token) {
  exitWith(
    'DISCORD_BOT_TOKEN is not set. Create an application and a bot at\n' +
      'https://discord.com/developers/applications (Bot → Reset Token), then run:\n' +
      '  DISCORD_BOT_TOKEN=... npx tsx examples/discord-bot.ts',
  );
}

const api = urlFromEnv('DISCORD_API_URL');
const shards = process.env.DISCORD_SHARDS ?? '1';
const shardCount = Number(shards);
if (!Number.isInteger(shardCount) || shardCount < 1) {
  exitWith(`DISCORD_SHARDS must be a whole number of shards, 1 or more, not "${shards}".`);
}
const model = modelOrExit();

class SupportAgent extends BaseAgent {
  name = 'support-agent';
  description = 'Answers questions about orders in Discord servers and DMs';
  instructions =
    'You are a friendly support agent on a Discord server. Answer briefly; Markdown is fine.';
  override model = model;
}

const discord = new DiscordChannel({
  token,
  shardCount,
  ...(api && { clientOptions: { rest: { api: api.replace(/\/+$/, '') } } }),
});

// No store given: the bot opens SQLite at COLLOQUY_DB (default ./colloquy.db) and closes it on stop.
const bot = new Bot({ channels: [discord], agents: [new SupportAgent()] });
await launch(bot);
const me = discord.botIdentity;
console.log(
  me === undefined
    ? 'Started: the instances on this database share the Discord gateway, this one takes the shards nobody holds. Press Ctrl+C to stop.'
    : `${me.username} is connected to Discord. Press Ctrl+C to stop.`,
);
