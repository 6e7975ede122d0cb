/// <reference types="node" preserve="true" />
// The public entry point `colloquy`: what a bot's author uses. It is the core (src/), the
// agents (agents/), and the store a bot opens when given none (db/default-store.ts). Platform
// channels live in their own subpaths (`colloquy/slack`, `colloquy/discord`,
// `colloquy/telegram`, `colloquy/console`), the stores in `colloquy/sqlite`,
// `colloquy/postgres` and `colloquy/redis`, and the offline fakes in `colloquy/testing`, so a
// bot loads only what it uses.
import { setDefaultStore } from './src/bot.js';
import { openDefaultStore } from './db/default-store.js';

// A bot given no store opens the one COLLOQUY_DB names (SQLite by default).
setDefaultStore(() => openDefaultStore());

export * from './src/index.js';
export { defaultDbPath, isPostgresUrl } from './db/default-store.js';
export { splitMessage } from './channels/shared/split.js';

// Agents and models
export { BaseAgent } from './agents/base-agent.js';
export { SummarizerAgent } from './agents/summarizer-agent.js';
export { describeModel, ModelConfigError, modelFromEnv } from './agents/models.js';
export { isOfflineModel, offlineModel } from './agents/offline-model.js';
export { conversationSearchTool } from './agents/tools/conversation-search.js';
export { recallToolResultTool } from './agents/tools/recall-tool-result.js';
export { followUpTool } from './agents/tools/follow-up.js';
export type { FollowUpInput, SendPost } from './agents/tools/follow-up.js';
export { delegate, delegateTool } from './agents/delegation.js';
export { replyFile } from './agents/files.js';
export type { SummarizerAgentOptions } from './agents/summarizer-agent.js';
export type { DelegationRequest, DelegationResult } from './agents/delegation.js';
export type { ConversationSearchInput } from './agents/tools/conversation-search.js';
