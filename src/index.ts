// The public entry point `colloquy`: what a bot's author uses. Platform channels live in their
// own subpaths (`colloquy/slack`, `colloquy/discord`, `colloquy/telegram`, `colloquy/console`),
// the SQLite store in `colloquy/sqlite` and the offline fakes in `colloquy/testing`, so a bot
// loads only what it uses. Helpers the packages share with each other (search keys, row
// mapping, summary ids…) stay internal: the other folders import them by path, not from here.

// Running a bot
export { Bot, defaultDbPath } from './bot.js';
export { isPostgresUrl } from './db-path.js';
export { compose } from './chain.js';
export { concerns } from './agent.js';
export { splitMessage } from '../channels/shared/split.js';

// Stores
export { InMemoryConversationStore } from './memory-store.js';

// One conversation as a live object, and its plugins
export { History } from './history/history.js';
export { PluginError } from './history/plugins.js';
export { rollingCompression, toolResultMasking } from './history/builtins.js';

// Errors
export {
  AgentError,
  ColloquyError,
  MalformedEventError,
  NetworkError,
  PlatformError,
  RateLimitError,
  StoreError,
} from './errors.js';

// Logging
export {
  addSecret,
  consoleLogger,
  createConsoleLogger,
  redactText,
  silentLogger,
} from './logger.js';

// Prompts
export { assemblePrompt, DEFAULT_ASSEMBLER_OPTIONS } from './assemble.js';
export { defaultTokenizer } from './tokenizer.js';

// Agents and models (agents/ builds on src/; this barrel is the one place in src/ that
// reaches it, so `import { BaseAgent } from 'colloquy'` works)
export { BaseAgent } from '../agents/base-agent.js';
export { SummarizerAgent } from '../agents/summarizer-agent.js';
export { describeModel, ModelConfigError, modelFromEnv } from '../agents/models.js';
export { isOfflineModel, offlineModel } from '../agents/offline-model.js';
export { conversationSearchTool } from '../agents/tools/conversation-search.js';
export { recallToolResultTool } from '../agents/tools/recall-tool-result.js';
export { delegate, delegateTool } from '../agents/delegation.js';

// Types (modules of types only are exported whole)
export type * from './store.js';
export type { ClaimedRuns, Lease } from './leases.js';
export type * from './chain.js';
export type * from './channel.js';
export type * from './context.js';
export type {
  ChannelType,
  ConversationScope,
  MessageDeletion,
  MessageEdit,
  MessageMetadata,
  MessageSource,
  NewMessage,
  Participant,
  ParticipantKind,
  PlatformMessageRef,
  StoredMessage,
} from './types.js';
export type { ConsoleLoggerOptions, Logger, LogLevel } from './logger.js';
export type { Tokenizer } from './tokenizer.js';
export type { Agent, AgentResult, AgentRunContext } from './agent.js';
export type { CaptureOptions, CaptureStats, DeadLetter } from './capture.js';
export type { AssembledPrompt, AssemblerOptions, SummarizeInput, Summarizer } from './assemble.js';
export type { BotOptions, ErrorHandler } from './bot.js';
export type { CapturedChange } from './bot/tap.js';
export type { HistoryEvents, HistoryJSON, HistoryOptions } from './history/history.js';
export type {
  AssistantEntry,
  HistoryEntry,
  HistoryEntryInput,
  HistoryPlace,
  SourcedEntry,
  ToolCall,
  ToolEntry,
  UserEntry,
} from './history/entries.js';
export type { HistoryPlugin, PluginContext, Reduction, ReduceContext } from './history/plugins.js';
export type { RollingCompressionOptions, ToolResultMaskingOptions } from './history/builtins.js';
export type { SummarizerAgentOptions } from '../agents/summarizer-agent.js';
export type { DelegationRequest, DelegationResult } from '../agents/delegation.js';
export type { ConversationSearchInput } from '../agents/tools/conversation-search.js';
