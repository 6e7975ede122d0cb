import { userInfo } from 'node:os';
import { createInterface } from 'node:readline';
import type { Interface } from 'node:readline';
import type {
  BotIdentity,
  Channel,
  ChannelHandlers,
  OutboundMessage,
  SentMessage,
} from '../../src/channel.js';
import { ColloquyError } from '../../src/errors.js';
import { isoTimestamp } from '../../src/types.js';
import type { NewMessage, Participant } from '../../src/types.js';

/**
 * Options of `ConsoleChannel`; all optional.
 *
 * @example
 * ```ts
 * new ConsoleChannel({ session: 'demo', prompt: 'you> ' });
 * ```
 */
export interface ConsoleChannelOptions {
  /** Where lines come from (default `process.stdin`). */
  input?: NodeJS.ReadableStream;
  /** Where replies go (default `process.stdout`). */
  output?: NodeJS.WritableStream;
  /** Names the conversation `console:<session>` (default `local`). */
  session?: string;
  /** Who is typing (default `console:<os user>`, display name `COLLOQUY_USER_NAME` or the os user). */
  user?: Participant;
  /** The readline prompt on a terminal (default `> `). */
  prompt?: string;
  /** Line editing and a prompt; default: when both streams are TTYs. */
  terminal?: boolean;
}

/**
 * A channel on standard input and output: every line typed (or piped) is a turn in the DM
 * `console:<session>`, every reply is printed. Lines are handled one at a time, in order, each
 * after the previous answer; at end of input (Ctrl-D, the end of a pipe, Ctrl-C, or `/quit`)
 * `closed` resolves so the program can stop the bot.
 *
 * @example
 * ```ts
 * import { Bot } from 'colloquy';
 * import { ConsoleChannel } from 'colloquy/console';
 * const console = new ConsoleChannel();
 * const bot = new Bot({ channels: [console], agents: [new SupportAgent()] });
 * await bot.start();
 * await console.closed;
 * await bot.stop();
 * ```
 */
export class ConsoleChannel implements Channel {
  readonly type = 'console';
  readonly botIdentity: BotIdentity = { id: 'console:bot', displayName: 'colloquy' };
  /** Resolves when the input has ended (or `stop` was called). */
  readonly closed: Promise<void>;
  readonly conversationId: string;
  readonly user: Participant;

  readonly #input: NodeJS.ReadableStream;
  readonly #output: NodeJS.WritableStream;
  readonly #session: string;
  readonly #prompt: string;
  readonly #terminal: boolean;
  /** Makes message ids unique across runs writing to the same store. */
  readonly #run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  #lines = 0;
  #replies = 0;
  #rl: Interface | undefined;
  #stopping = false;
  #resolveClosed!: () => void;

  constructor(options: ConsoleChannelOptions = {}) {
    this.#input = options.input ?? process.stdin;
    this.#output = options.output ?? process.stdout;
    this.#session = options.session ?? 'local';
    this.#prompt = options.prompt ?? '> ';
    this.#terminal = options.terminal ?? (isTTY(this.#input) && isTTY(this.#output));
    this.conversationId = `console:${this.#session}`;
    this.user = options.user ?? consoleUser();
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
  }

  async start(handlers: ChannelHandlers): Promise<void> {
    if (this.#rl !== undefined) return;
    const rl = createInterface({
      input: this.#input,
      output: this.#terminal ? this.#output : undefined,
      terminal: this.#terminal,
      prompt: this.#prompt,
    });
    this.#rl = rl;
    rl.on('SIGINT', () => rl.close());
    const lines = rl[Symbol.asyncIterator]();
    void this.#loop(lines, handlers).finally(() => this.#resolveClosed());
  }

  async #loop(lines: AsyncIterator<string>, handlers: ChannelHandlers): Promise<void> {
    if (this.#terminal) this.#rl?.prompt();
    for (;;) {
      const next = await lines.next();
      if (next.done === true || this.#stopping) return;
      const text = next.value.trim();
      if (text === '/quit' || text === '/exit') return void this.#rl?.close();
      if (text !== '') await this.#hand(handlers, this.#turn(text));
      if (this.#terminal && !this.#stopping) this.#rl?.prompt();
    }
  }

  /** Hands a line to the bot and waits for its answer; a line not committed is reported. */
  async #hand(handlers: ChannelHandlers, turn: NewMessage): Promise<void> {
    try {
      await (
        await handlers.message(turn)
      ).handled;
    } catch (error) {
      handlers.error(
        error instanceof ColloquyError
          ? error
          : new ColloquyError('the line could not be stored', { cause: error }),
      );
    }
  }

  #turn(content: string): NewMessage {
    const messageId = `${this.#run}-${++this.#lines}`;
    return {
      id: `console:${this.#session}:${messageId}`,
      conversationId: this.conversationId,
      participant: this.user,
      content,
      timestamp: isoTimestamp(),
      scope: 'dm',
      metadata: { channelType: 'console', channelId: this.#session, messageId, mentions: [] },
    };
  }

  async send(message: OutboundMessage): Promise<SentMessage> {
    this.#output.write(`${message.content}\n`);
    return { messageIds: [`${this.#run}-r${++this.#replies}`], timestamp: isoTimestamp() };
  }

  /** Stops reading; the line being answered (if any) still finishes. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#rl?.close();
    if (this.#rl === undefined) this.#resolveClosed();
  }
}

function isTTY(stream: NodeJS.ReadableStream | NodeJS.WritableStream): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

/**
 * The person at the console: `console:<os user>`, named by `COLLOQUY_USER_NAME` or the os user.
 *
 * @example
 * ```ts
 * consoleUser({ COLLOQUY_USER_NAME: 'Ada' }); // { kind: 'user', id: 'console:<os user>', displayName: 'Ada' }
 * ```
 */
export function consoleUser(env: Record<string, string | undefined> = process.env): Participant {
  let username = env.USER ?? env.USERNAME ?? 'user';
  try {
    username = userInfo().username || username;
  } catch {
    // No passwd entry (some containers): keep the environment's name.
  }
  return {
    kind: 'user',
    id: `console:${username}`,
    displayName: env.COLLOQUY_USER_NAME?.trim() || username,
  };
}
