/// <reference types="node" preserve="true" />
// `colloquy/slack`: the Slack channel. Loads @slack/bolt; nothing else in colloquy does.
export * from './channel.js';
export * from './parse.js';
export * from './format.js';
