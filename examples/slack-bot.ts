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
import { BaseAgent, Bot } from 'colloquy';
import { SlackChannel } from 'colloquy/slack';
import { exitWith, launch, modelOrExit, portFromEnv, urlFromEnv } from './launch.js';

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
  exitWith(
    `Missing ${missing.join(' and ')}. See docs/slack.md to create the app, then run:\n` +
      '  SLACK_BOT_TOKEN=xoxb-… SLACK_SIGNING_SECRET=… npx tsx examples/slack-bot.ts\n' +
      '  SLACK_BOT_TOKEN=xoxb-… SLACK_APP_TOKEN=xapp-… npx tsx examples/slack-bot.ts   # Socket Mode',
  );
}

const { port, problem } = portFromEnv();
if (!appToken && problem) exitWith(problem);

const apiUrl = urlFromEnv('SLACK_API_URL');
const model = modelOrExit();

class SupportAgent extends BaseAgent {
  name = 'support-agent';
  description = 'Answers questions about orders in Slack';
  instructions =
    'You are a friendly support agent in a Slack workspace. Answer briefly; Markdown is fine.';
  override model = model;
}

const slack = new SlackChannel({
  token: token as string,
  ...(appToken ? { appToken } : { signingSecret, port }),
  ...(apiUrl && { clientOptions: { slackApiUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/` } }),
});

// No store given: the bot opens SQLite at COLLOQUY_DB (default ./colloquy.db) and closes it on stop.
const bot = new Bot({ channels: [slack], agents: [new SupportAgent()] });
await launch(bot);
const me = slack.botIdentity;
console.log(
  appToken
    ? `@${me?.displayName} is connected over Socket Mode. Press Ctrl+C to stop.`
    : `@${me?.displayName} receives events at http://localhost:${port}/slack/events. Press Ctrl+C to stop.`,
);
