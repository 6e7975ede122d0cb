// The core's public names: the platform-free part of `colloquy` (see ../index.ts, the entry
// point, which adds the agents and the default store). Helpers the folders share with each
// other (search keys, row mapping, summary ids…) stay internal: imported by path, not from here.

// Running a bot
export { Bot } from './bot.js';
export { compose } from './chain.js';
export { concerns } from './agent.js';

// Stores
export { InMemoryConversationStore } from './memory-store.js';

// One conversation as a live object, and its plugins
export { History } from './history/history.js';
export { PluginError } from './history/plugins.js';
export { rollingCompression, toolResultMasking } from './history/builtins.js';

// Errors
export {
  AgentError,
  AttachmentTooLargeError,
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

// Types (modules of types only are exported whole)
export type * from './store.js';
export type { ClaimedRuns, Lease } from './leases.js';
export type {
  NewPost,
  PostMessage,
  PostPlace,
  PostQueue,
  PostReceipt,
  PostStatus,
  ScheduledPost,
  SendPostOptions,
} from './posts.js';
export type { Interceptor, Next, SendHook, TurnContext } from './chain.js';
export type * from './channel.js';
export type {
  ChannelType,
  ConversationScope,
  Interaction,
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
export type {
  AttachmentFetchOptions,
  AttachmentKind,
  FetchAttachment,
  FetchedAttachment,
  MessageAttachment,
} from './attachments.js';
export type {
  AttachmentOptions,
  AttachmentPartKind,
  PromptAttachments,
} from './assemble/attachments.js';
export type { MessageReaction, ReactionChange } from './reactions.js';
export type { ConsoleLoggerOptions, Logger, LogLevel } from './logger.js';
export type { Tokenizer } from './tokenizer.js';
export type { Agent, AgentResult, AgentRunContext } from './agent.js';
export type { CaptureOptions, CaptureStats, DeadLetter } from './capture.js';
export type { AssembledPrompt, AssemblerOptions, SummarizeInput, Summarizer } from './assemble.js';
export type { BotOptions, ErrorHandler } from './bot.js';
export type { Command, CommandHandler } from './interactions.js';
export type { UnconfirmedReplies } from './bot/settle.js';
export type { BurstMode, BurstOption } from './bot/bursts.js';
export type { AnswerReactions, ReactionTurn } from './bot/reactions.js';
export type { HistoryEvents, HistoryJSON, HistoryOptions } from './history/options.js';
export type {
  AssistantEntry,
  HistoryEntry,
  HistoryEntryInput,
  HistoryPlace,
  SourcedEntry,
  SystemEntry,
  ToolCall,
  ToolEntry,
  UserEntry,
} from './history/entries.js';
export type { HistoryPlugin, PluginContext, Reduction, ReduceContext } from './history/plugins.js';
export type { RollingCompressionOptions, ToolResultMaskingOptions } from './history/builtins.js';
