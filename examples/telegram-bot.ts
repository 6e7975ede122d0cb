/**
 * A Telegram bot that answers when mentioned, replied to or written to directly, and keeps
 * every conversation in SQLite.
 *
 *   TELEGRAM_BOT_TOKEN=123:ABC npx tsx examples/telegram-bot.ts
 *
 * Environment:
 * - TELEGRAM_BOT_TOKEN       the token from @BotFather (required)
 * - TELEGRAM_API_ROOT        another Bot API server (a local one, or a FakeTelegram)
 * - TELEGRAM_WEBHOOK_URL     public HTTPS URL: switches to webhook mode, listening on PORT
 * - TELEGRAM_WEBHOOK_SECRET  the webhook's secret token (generated when unset)
 * - PORT                     webhook port (default 3000)
 * - COLLOQUY_DB              SQLite file (default ./colloquy.db)
 * - COLLOQUY_MODEL           e.g. openai:gpt-4o-mini; the offline model when unset
 */
import { randomBytes } from 'node:crypto';
import { BaseAgent, Bot } from 'colloquy';
import { TelegramChannel } from 'colloquy/telegram';
import { exitWith, launch, modelOrExit, portFromEnv, urlFromEnv } from './launch.js';

const token = process.env.TELEGRAM_BOT_TOKEN;
if (!token) {
  exitWith(
    'TELEGRAM_BOT_TOKEN is not set. Create a bot with @BotFather (/newbot) and run:\n' +
      '  TELEGRAM_BOT_TOKEN=123456:ABC... npx tsx examples/telegram-bot.ts',
  );
}

const webhookUrl = process.env.TELEGRAM_WEBHOOK_URL;
const { port, problem } = portFromEnv();
if (webhookUrl && !URL.canParse(webhookUrl)) {
  exitWith(`TELEGRAM_WEBHOOK_URL must be a URL such as https://bot.example.com/telegram.`);
}
if (webhookUrl && problem) exitWith(problem);

const apiRoot = urlFromEnv('TELEGRAM_API_ROOT');
const model = modelOrExit();

class SupportAgent extends BaseAgent {
  name = 'support-agent';
  description = 'Answers questions about orders in Telegram chats';
  instructions =
    'You are a friendly support agent in a Telegram chat. Answer briefly and in plain text.';
  override model = model;
}

const telegram = new TelegramChannel({
  token,
  ...(apiRoot && { client: { apiRoot: apiRoot.replace(/\/+$/, '') } }),
  ...(webhookUrl && {
    mode: 'webhook' as const,
    webhook: {
      url: webhookUrl,
      secretToken: process.env.TELEGRAM_WEBHOOK_SECRET || randomBytes(32).toString('hex'),
      port,
      path: new URL(webhookUrl).pathname,
    },
  }),
});

// No store given: the bot opens SQLite at COLLOQUY_DB (default ./colloquy.db) and closes it on stop.
const bot = new Bot({ channels: [telegram], agents: [new SupportAgent()] });
await launch(bot);
const me = telegram.botIdentity;
console.log(
  webhookUrl
    ? `@${me?.username} receives updates at ${webhookUrl} (port ${telegram.webhookPort}).`
    : `@${me?.username} is polling for updates. Press Ctrl+C to stop.`,
);
