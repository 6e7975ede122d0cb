// The public entry point `colloquy`. Platform channels live in their own subpaths
// (`colloquy/slack`, `colloquy/discord`, `colloquy/telegram`, `colloquy/console`), the SQLite
// store in `colloquy/sqlite` and the offline fakes in `colloquy/testing`, so a bot loads only
// what it uses.
export * from './types.js';
export * from './store.js';
export * from './chain.js';
export * from './channel.js';
export * from './context.js';
export * from './errors.js';
export * from './logger.js';
export * from './tokenizer.js';
export * from './search-words.js';
export * from './timestamp.js';
export * from './split.js';
export * from './recent.js';
export * from './agent.js';
export * from './memory-store.js';
export * from './capture.js';
export * from './capture-interceptors.js';
export * from './assemble.js';
export * from './bot.js';
export * from './history/entries.js';
export * from './history/plugins.js';
export * from './history/builtins.js';
export { History } from './history/history.js';
export type { HistoryEvents, HistoryJSON, HistoryOptions } from './history/history.js';
export type { CapturedChange } from './bot/tap.js';
// The agent classes live in agents/ (which builds on src/); the barrel is the one place in
// src/ that reaches them, so `import { BaseAgent } from 'colloquy'` works.
export * from '../agents/index.js';
