/// <reference types="node" preserve="true" />
// `colloquy/testing`: protocol-faithful fakes of every platform and of an OpenAI-compatible
// model server, all on 127.0.0.1, and an in-memory channel, for testing bots offline with the
// real platform libraries.
export * from '../telegram/fake.js';
export * from '../telegram/fake-interactions.js';
export * from '../slack/fake.js';
export * from '../discord/fake.js';
export * from './fake-model-server.js';
export * from './memory-channel.js';
export * from './traffic.js';
export type { FakeFile } from './fake-files.js';
