/// <reference types="node" preserve="true" />
/**
 * `colloquy/console`: a channel on standard input and output, for trying agents locally.
 *
 * @example
 * ```ts
 * import { ConsoleChannel } from 'colloquy/console';
 * const channel = new ConsoleChannel({ session: 'demo' }); // conversation `console:demo`
 * ```
 */
export { ConsoleChannel, consoleUser, type ConsoleChannelOptions } from './channel.js';
