// Test helpers shipped with colloquy (exported as `colloquy/testing`).
export * from './fake-model-server.js';
export * from './memory-channel.js';
export * from './traffic.js';
