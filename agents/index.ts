// Agents: `BaseAgent`, model selection, the offline model and the built-in tools.
// Re-exported from the `colloquy` entry point.
export * from './base-agent.js';
export * from './models.js';
export * from './offline-model.js';
export * from './tools/index.js';
export * from './summarizer-agent.js';
