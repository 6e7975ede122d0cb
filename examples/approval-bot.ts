/**
 * A bot whose agent refunds orders only when the person approves: its `refund_order` tool
 * needs approval, so the agent asks with Approve / Deny buttons (Telegram inline keyboard,
 * Slack Block Kit, Discord components) and refunds on Approve. The question waits in the
 * store: a restart between the question and the press loses nothing.
 *
 *   TELEGRAM_BOT_TOKEN=123:ABC COLLOQUY_MODEL=openai:gpt-4o-mini npx tsx examples/approval-bot.ts
 *   SLACK_BOT_TOKEN=xoxb-… SLACK_SIGNING_SECRET=… COLLOQUY_MODEL=… npx tsx examples/approval-bot.ts
 *   DISCORD_BOT_TOKEN=… COLLOQUY_MODEL=openai:gpt-4o-mini npx tsx examples/approval-bot.ts
 *
 * The platform is the one whose token is set (Telegram first, then Slack, then Discord).
 *
 * Environment:
 * - TELEGRAM_BOT_TOKEN    the token from @BotFather
 * - TELEGRAM_API_ROOT     another Bot API server (a local one, or a FakeTelegram)
 * - SLACK_BOT_TOKEN       the Bot User OAuth Token (xoxb-…); the app's Interactivity Request
 *                         URL is its /slack/events URL (see docs/slack.md)
 * - SLACK_SIGNING_SECRET  the app's Signing Secret (HTTP events)
 * - SLACK_APP_TOKEN       an app-level token (xapp-…, scope connections:write): Socket Mode
 * - SLACK_API_URL         another Web API base, e.g. a FakeSlack's http://127.0.0.1:PORT/api/
 * - PORT                  HTTP port for Slack's /slack/events (default 3000)
 * - DISCORD_BOT_TOKEN     the token from Developer Portal → your application → Bot
 * - DISCORD_API_URL       another REST API root (a FakeDiscord's `restApi`)
 * - COLLOQUY_DB           SQLite file (default ./colloquy.db)
 * - COLLOQUY_MODEL        a model that calls tools, e.g. openai:gpt-4o-mini
 */
import { jsonSchema, tool } from 'ai';
import { BaseAgent, Bot, type Channel } from 'colloquy';
import { exitWith, launch, modelOrExit, portFromEnv, urlFromEnv } from './launch.js';

const model = modelOrExit();

class BillingAgent extends BaseAgent {
  name = 'billing';
  description = 'Refunds orders';
  instructions = 'You refund orders with refund_order when asked. Answer briefly.';
  override model = model;
  override tools = {
    refund_order: tool({
      description: 'Refunds an order',
      inputSchema: jsonSchema<{ orderId: string }>({
        type: 'object',
        properties: { orderId: { type: 'string' } },
        required: ['orderId'],
      }),
      needsApproval: true, // the agent asks with Approve / Deny first
      execute: async ({ orderId }) => {
        console.log(`refunded order ${orderId}`);
        return { refunded: orderId };
      },
    }),
  };
}

/** The channel whose token is set, and the line it prints once started. */
async function channelFromEnv(): Promise<{ channel: Channel; started: () => string }> {
  const env = process.env;
  if (env.TELEGRAM_BOT_TOKEN) {
    const { TelegramChannel } = await import('colloquy/telegram');
    const apiRoot = urlFromEnv('TELEGRAM_API_ROOT');
    const telegram = new TelegramChannel({
      token: env.TELEGRAM_BOT_TOKEN,
      ...(apiRoot && { client: { apiRoot: apiRoot.replace(/\/+$/, '') } }),
    });
    const started = () =>
      `@${telegram.botIdentity?.username} is polling for updates. Press Ctrl+C to stop.`;
    return { channel: telegram, started };
  }
  if (env.SLACK_BOT_TOKEN) {
    const { SlackChannel } = await import('colloquy/slack');
    const { SLACK_SIGNING_SECRET: signingSecret, SLACK_APP_TOKEN: appToken } = env;
    if (!signingSecret && !appToken) {
      exitWith('Set SLACK_SIGNING_SECRET (or SLACK_APP_TOKEN for Socket Mode); see docs/slack.md.');
    }
    const { port, problem } = portFromEnv();
    if (!appToken && problem) exitWith(problem);
    const apiUrl = urlFromEnv('SLACK_API_URL');
    const slack = new SlackChannel({
      token: env.SLACK_BOT_TOKEN,
      ...(appToken ? { appToken } : { signingSecret, port }),
      ...(apiUrl && { clientOptions: { slackApiUrl: apiUrl.replace(/\/*$/, '/') } }),
    });
    const started = () =>
      appToken
        ? `@${slack.botIdentity?.displayName} is connected over Socket Mode. Press Ctrl+C to stop.`
        : `@${slack.botIdentity?.displayName} receives events at http://localhost:${port}/slack/events. Press Ctrl+C to stop.`;
    return { channel: slack, started };
  }
  if (env.DISCORD_BOT_TOKEN) {
    const { DiscordChannel } = await import('colloquy/discord');
    const api = urlFromEnv('DISCORD_API_URL');
    const discord = new DiscordChannel({
      token: env.DISCORD_BOT_TOKEN,
      ...(api && { clientOptions: { rest: { api: api.replace(/\/+$/, '') } } }),
    });
    const started = () =>
      `${discord.botIdentity?.username} is connected to Discord. Press Ctrl+C to stop.`;
    return { channel: discord, started };
  }
  return exitWith(
    'Set TELEGRAM_BOT_TOKEN, SLACK_BOT_TOKEN or DISCORD_BOT_TOKEN to choose the platform.',
  );
}

const { channel, started } = await channelFromEnv();
// No store given: the bot opens SQLite at COLLOQUY_DB (default ./colloquy.db) and closes it on stop.
const bot = new Bot({ channels: [channel], agents: [new BillingAgent()] });
await launch(bot);
console.log(started());
