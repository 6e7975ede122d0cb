// The public entry point `colloquy`. Platform channels live in their own subpaths
// (`colloquy/slack`, `colloquy/discord`, `colloquy/telegram`, `colloquy/console`) and the
// SQLite store in `colloquy/sqlite`, so a bot loads only what it uses.
export * from './types.js';
export * from './store.js';
export * from './chain.js';
export * from './channel.js';
export * from './context.js';
export * from './errors.js';
export * from './tokenizer.js';
export * from './agent.js';
export * from './split.js';
export * from './search-words.js';
export * from './memory-store.js';
export * from './assemble.js';
export * from './logger.js';
export * from './capture.js';
export * from '../agents/index.js';
export * from './bot.js';
