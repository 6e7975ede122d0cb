/**
 * A Telegram bot whose agent refunds orders only when the person approves: its `refund_order`
 * tool needs approval, so the agent asks with Approve / Deny buttons and refunds on Approve.
 * The question waits in the store: a restart between the question and the press loses nothing.
 *
 *   TELEGRAM_BOT_TOKEN=123:ABC COLLOQUY_MODEL=openai:gpt-4o-mini npx tsx examples/approval-bot.ts
 *
 * Environment:
 * - TELEGRAM_BOT_TOKEN  the token from @BotFather (required)
 * - TELEGRAM_API_ROOT   another Bot API server (a local one, or a FakeTelegram)
 * - COLLOQUY_DB         SQLite file (default ./colloquy.db)
 * - COLLOQUY_MODEL      a model that calls tools, e.g. openai:gpt-4o-mini
 */
import { jsonSchema, tool } from 'ai';
import { BaseAgent, Bot } from 'colloquy';
import { TelegramChannel } from 'colloquy/telegram';
import { exitWith, launch, modelOrExit, urlFromEnv } from './launch.js';

const token = process.env.TELEGRAM_BOT_TOKEN;
if (!token) exitWith('TELEGRAM_BOT_TOKEN is not set. Create a bot with @BotFather (/newbot).');
const apiRoot = urlFromEnv('TELEGRAM_API_ROOT');
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

const telegram = new TelegramChannel({
  token,
  ...(apiRoot && { client: { apiRoot: apiRoot.replace(/\/+$/, '') } }),
});
const bot = new Bot({ channels: [telegram], agents: [new BillingAgent()] });
await launch(bot);
console.log(`@${telegram.botIdentity?.username} is polling for updates. Press Ctrl+C to stop.`);
