/**
 * A support agent on your terminal: `npm start`.
 *
 * Every line you type is a turn in the conversation `console:local`; the agent answers and
 * both are captured into SQLite. Without `COLLOQUY_MODEL` the offline model answers (no key,
 * no network); with it, a real one does.
 *
 * Environment:
 * - COLLOQUY_MODEL   e.g. openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, ollama:llama3.2
 * - COLLOQUY_DB      SQLite file (default ./colloquy.db), or a postgres:// URL
 *
 * Then ask the database: sqlite3 colloquy.db 'SELECT * FROM messages ORDER BY seq'
 */
import {
  BaseAgent,
  Bot,
  defaultDbPath,
  describeModel,
  isOfflineModel,
  isPostgresUrl,
  redactText,
} from 'colloquy';
import { ConsoleChannel } from 'colloquy/console';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { launch, modelOrExit, openOrExit } from './launch.js';

const model = modelOrExit();

class SupportAgent extends BaseAgent {
  name = 'support-agent';
  description = 'Answers questions about orders';
  instructions =
    'You are a helpful support agent for an online shop. Answer briefly. Use conversation_search to look up what was said earlier.';
  override model = model;
}

const dbPath = defaultDbPath();
// A postgres:// COLLOQUY_DB opens the Postgres store (npm install pg), anything else a SQLite file.
const store = await openOrExit(async () => {
  if (!isPostgresUrl(dbPath)) return SqliteConversationStore.open(dbPath);
  const { PostgresConversationStore } = await import('colloquy/postgres');
  return PostgresConversationStore.open(dbPath);
});
const channel = new ConsoleChannel();
const bot = new Bot({ channels: [channel], agents: [new SupportAgent()], store });

console.error(
  isOfflineModel(model)
    ? 'colloquy: using the offline model — set COLLOQUY_MODEL=openai:gpt-4o-mini (and OPENAI_API_KEY) for a real one'
    : `colloquy: using ${describeModel(model)}`,
);
console.error(
  `colloquy: capturing into ${redactText(dbPath)} (conversation ${channel.conversationId}); Ctrl-D or Ctrl-C to quit`,
);

await launch(bot);
// The end of input, Ctrl-D, Ctrl-C or SIGTERM all end here: stop the bot, then the store.
await channel.closed;
await bot.stop();
await store.close();
// Turns that could not be stored are in the dead-letter file beside the database (the bot
// said so): the exit code says so too.
if ((bot.captureStats?.deadLettered ?? 0) > 0) process.exitCode = 1;
