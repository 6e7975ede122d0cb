/**
 * A Slack bot that answers when mentioned, written to in a DM, or replied to in its own
 * threads, and keeps every conversation in SQLite.
 *
 *   SLACK_BOT_TOKEN=xoxb-… SLACK_SIGNING_SECRET=… npx tsx examples/slack-bot.ts     # HTTP events
 *   SLACK_BOT_TOKEN=xoxb-… SLACK_APP_TOKEN=xapp-… npx tsx examples/slack-bot.ts      # Socket Mode
 *
 * Environment:
 * - SLACK_BOT_TOKEN       the Bot User OAuth Token (xoxb-…) (required)
 * - SLACK_SIGNING_SECRET  the app's Signing Secret (required for HTTP events)
 * - SLACK_APP_TOKEN       an app-level token (xapp-…, scope connections:write): Socket Mode
 * - PORT                  HTTP port for /slack/events (default 3000)
 * - SLACK_API_URL         another Web API base, e.g. a FakeSlack's http://127.0.0.1:PORT/api/
 * - COLLOQUY_DB           SQLite file (default ./colloquy.db)
 * - COLLOQUY_MODEL        e.g. openai:gpt-4o-mini; the offline model when unset
 */
import { BaseAgent, Bot, modelFromEnv, redactText } from 'colloquy';
import { SlackChannel } from 'colloquy/slack';

const token = process.env.SLACK_BOT_TOKEN;
const signingSecret = process.env.SLACK_SIGNING_SECRET;
const appToken = process.env.SLACK_APP_TOKEN;
const missing = [
  ...(token ? [] : ['SLACK_BOT_TOKEN']),
  ...(signingSecret || appToken
    ? []
    : ['SLACK_SIGNING_SECRET (or SLACK_APP_TOKEN for Socket Mode)']),
];
if (missing.length > 0) {
  console.error(
    `Missing ${missing.join(' and ')}. See docs/slack.md to create the app, then run:\n` +
      '  SLACK_BOT_TOKEN=xoxb-… SLACK_SIGNING_SECRET=… npx tsx examples/slack-bot.ts\n' +
      '  SLACK_BOT_TOKEN=xoxb-… SLACK_APP_TOKEN=xapp-… npx tsx examples/slack-bot.ts   # Socket Mode',
  );
  process.exit(1);
}

const portText = process.env.PORT ?? '3000';
const port = Number(portText);
if (!appToken && !(Number.isInteger(port) && port >= 0 && port < 65536)) {
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
  description = 'Answers questions about orders in Slack';
  instructions =
    'You are a friendly support agent in a Slack workspace. Answer briefly; Markdown is fine.';
  override model = model;
}

const apiUrl = process.env.SLACK_API_URL;
const slack = new SlackChannel({
  token: token as string,
  ...(appToken ? { appToken } : { signingSecret, port }),
  ...(apiUrl && { clientOptions: { slackApiUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/` } }),
});

// No store given: the bot opens SQLite at COLLOQUY_DB (default ./colloquy.db) and closes it on stop.
const bot = new Bot({ channels: [slack], agents: [new SupportAgent()] });
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
const me = slack.botIdentity;
console.log(
  appToken
    ? `@${me?.displayName} is connected over Socket Mode. Press Ctrl+C to stop.`
    : `@${me?.displayName} receives events at http://localhost:${port}/slack/events. Press Ctrl+C to stop.`,
);
