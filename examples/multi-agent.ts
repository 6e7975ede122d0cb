/**
 * Two agents, two platforms, one SQLite file. `triage-agent` answers people on Telegram and
 * Slack and hands billing questions on by mentioning `@billing-agent`; `billing-agent`
 * answers only turns that name it. Each agent's replies are turns the other can read: its
 * prompt shows them as `triage-agent (agent): …`. Agents that keep mentioning each other
 * stop after `maxAgentDepth` agent turns in a row.
 *
 *   TELEGRAM_BOT_TOKEN=123:ABC SLACK_BOT_TOKEN=xoxb-… SLACK_SIGNING_SECRET=… npx tsx examples/multi-agent.ts
 *   TELEGRAM_BOT_TOKEN=123:ABC SLACK_BOT_TOKEN=xoxb-… SLACK_APP_TOKEN=xapp-… npx tsx examples/multi-agent.ts
 *
 * Environment:
 * - TELEGRAM_BOT_TOKEN    the token from @BotFather (required)
 * - TELEGRAM_API_ROOT     another Bot API server (a local one, or a FakeTelegram)
 * - SLACK_BOT_TOKEN       the Bot User OAuth Token, xoxb-… (required)
 * - SLACK_SIGNING_SECRET  the app's Signing Secret (required for HTTP events)
 * - SLACK_APP_TOKEN       an app-level token (xapp-…, scope connections:write): Socket Mode
 * - SLACK_API_URL         another Web API base, e.g. a FakeSlack's http://127.0.0.1:PORT/api/
 * - PORT                  HTTP port for Slack's /slack/events (default 3000; 0 picks a free one)
 * - COLLOQUY_DB           SQLite file both platforms write to (default ./colloquy.db)
 * - COLLOQUY_MODEL        e.g. openai:gpt-4o-mini; the offline model when unset
 *
 * Then ask the database: npx colloquy sql "select conversation_id, line from transcript"
 */
import { BaseAgent, Bot, defaultDbPath, describeModel, isOfflineModel, redactText } from 'colloquy';
import type { NewMessage } from 'colloquy';
import { SlackChannel } from 'colloquy/slack';
import { TelegramChannel } from 'colloquy/telegram';
import { exitWith, launch, modelOrExit, portFromEnv, urlFromEnv } from './launch.js';

const {
  TELEGRAM_BOT_TOKEN: telegramToken = '',
  SLACK_BOT_TOKEN: slackToken = '',
  SLACK_SIGNING_SECRET: signingSecret,
  SLACK_APP_TOKEN: appToken,
} = process.env;
const { port, problem } = portFromEnv();
const telegramApiRoot = urlFromEnv('TELEGRAM_API_ROOT');
const slackApiUrl = urlFromEnv('SLACK_API_URL');

const missing = [
  ...(telegramToken ? [] : ['TELEGRAM_BOT_TOKEN']),
  ...(slackToken ? [] : ['SLACK_BOT_TOKEN']),
  ...(signingSecret || appToken
    ? []
    : ['SLACK_SIGNING_SECRET (or SLACK_APP_TOKEN for Socket Mode)']),
];
if (missing.length > 0 || problem) {
  exitWith(
    [
      ...(missing.length > 0 ? [`Missing ${new Intl.ListFormat('en').format(missing)}.`] : []),
      ...(problem ? [problem] : []),
      'Create a Telegram bot with @BotFather and a Slack app (docs/slack.md), then run:',
      '  TELEGRAM_BOT_TOKEN=123456:ABC... SLACK_BOT_TOKEN=xoxb-… SLACK_SIGNING_SECRET=… npx tsx examples/multi-agent.ts',
    ].join('\n'),
  );
}

const model = modelOrExit();

class TriageAgent extends BaseAgent {
  name = 'triage-agent';
  description = 'First contact for customers on Telegram and Slack';
  instructions =
    'You are the first contact for customers of an online shop. Answer briefly. When a question ' +
    'is about invoices, charges, refunds or payments, do not answer it yourself: write ' +
    '"@billing-agent" followed by the question, and tell the person billing will answer.';
  override model = model;
}

class BillingAgent extends BaseAgent {
  name = 'billing-agent';
  description = 'Answers billing questions handed to it';
  instructions =
    'You answer billing questions (invoices, charges, refunds) that @triage-agent hands you. ' +
    'Answer the customer directly and briefly. Mention @triage-agent only to hand back a ' +
    'question that is not about billing.';
  override model = model;

  /** Only turns that name it: not every DM or mention of the bot account the agents share. */
  shouldRespond(message: NewMessage): boolean {
    return (message.metadata.mentions ?? []).includes(this.id);
  }
}

const telegram = new TelegramChannel({
  token: telegramToken,
  ...(telegramApiRoot && { client: { apiRoot: telegramApiRoot.replace(/\/+$/, '') } }),
});
const slack = new SlackChannel({
  token: slackToken,
  ...(appToken ? { appToken } : { signingSecret, port }),
  ...(slackApiUrl && {
    clientOptions: { slackApiUrl: slackApiUrl.endsWith('/') ? slackApiUrl : `${slackApiUrl}/` },
  }),
});

// Without a `store` option the bot opens one SqliteConversationStore at COLLOQUY_DB on start,
// shared by both channels, and closes it on stop. To pick it in code, pass
// `store: new SqliteConversationStore({ path })` from 'colloquy/sqlite' (and close it yourself).
const bot = new Bot({
  channels: [telegram, slack],
  agents: [new TriageAgent(), new BillingAgent()],
});
await launch(bot);

const slackPort = slack.eventsUrl === undefined ? undefined : new URL(slack.eventsUrl).port;
console.log(`Telegram: @${telegram.botIdentity?.username} is polling for updates.`);
console.log(
  appToken
    ? `Slack: @${slack.botIdentity?.displayName} is connected over Socket Mode.`
    : `Slack: @${slack.botIdentity?.displayName} receives events at http://localhost:${slackPort}/slack/events.`,
);
console.log(
  isOfflineModel(model)
    ? 'Model: offline (set COLLOQUY_MODEL, e.g. openai:gpt-4o-mini, for real answers).'
    : `Model: ${describeModel(model)}.`,
);
console.log(`Conversations: ${redactText(defaultDbPath())}. Press Ctrl+C to stop.`);
