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
import { BaseAgent, Bot, modelFromEnv, redactText } from 'colloquy';
import { TelegramChannel } from 'colloquy/telegram';

const token = process.env.TELEGRAM_BOT_TOKEN;
if (!token) {
  console.error(
    'TELEGRAM_BOT_TOKEN is not set. Create a bot with @BotFather (/newbot) and run:\n' +
      '  TELEGRAM_BOT_TOKEN=123456:ABC... npx tsx examples/telegram-bot.ts',
  );
  process.exit(1);
}

const webhookUrl = process.env.TELEGRAM_WEBHOOK_URL;
const portText = process.env.PORT ?? '3000';
const port = Number(portText);
if (webhookUrl && !URL.canParse(webhookUrl)) {
  console.error(`TELEGRAM_WEBHOOK_URL must be a URL such as https://bot.example.com/telegram.`);
  process.exit(1);
}
if (webhookUrl && !(Number.isInteger(port) && port >= 0 && port < 65536)) {
  console.error(`PORT must be a port number (0 picks a free one), not "${portText}".`);
  process.exit(1);
}

let model: ReturnType<typeof modelFromEnv>;
try {
  model = modelFromEnv();
} catch (error) {
  console.error(error instanceof Error ? error.message : error); // e.g. an unknown provider, a missing key
  process.exit(1);
}

class SupportAgent extends BaseAgent {
  name = 'support-agent';
  description = 'Answers questions about orders in Telegram chats';
  instructions =
    'You are a friendly support agent in a Telegram chat. Answer briefly and in plain text.';
  override model = model;
}

const apiRoot = process.env.TELEGRAM_API_ROOT;
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
bot.installSignalHandlers(); // Ctrl-C / SIGTERM: finish in-flight turns, flush capture, close the db
bot.catch((error) => console.error(`[${error.name}] ${redactText(error.message)}`));

try {
  await bot.start();
} catch (error) {
  console.error(
    `Could not start: ${redactText(error instanceof Error ? error.message : String(error))}`,
  );
  await bot.stop();
  process.exit(1);
}
const me = telegram.botIdentity;
console.log(
  webhookUrl
    ? `@${me?.username} receives updates at ${webhookUrl} (port ${telegram.webhookPort}).`
    : `@${me?.username} is polling for updates. Press Ctrl+C to stop.`,
);
