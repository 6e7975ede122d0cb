import type { PostPlace } from '../../src/posts.js';
import { userInfo } from 'node:os';
import { createInterface } from 'node:readline';
import type { Interface } from 'node:readline';
import type {
  BotIdentity,
  Channel,
  ChannelHandlers,
  OutboundMessage,
  ReplyStream,
  SentMessage,
  StreamOptions,
  TypingIndicator,
} from '../../src/channel.js';
import { ColloquyError } from '../../src/errors.js';
import { isoTimestamp } from '../../src/types.js';
import { followText } from '../shared/stream.js';
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
  /**
   * A stream log lines are written to that shares the screen with the chat: while the channel
   * runs on a terminal, what is written to it is printed on its own line above the prompt
   * (default `process.stderr` when the output is `process.stdout` and both are terminals;
   * `false` leaves it alone).
   */
  logs?: NodeJS.WritableStream | false;
}

/**
 * A channel on standard input and output: every line typed (or piped) is a turn in the DM
 * `console:<session>`, stamped when it is typed, and every reply is printed. Lines typed while an
 * answer is pending are handed to the bot in order and answered in turn. At end of input
 * (Ctrl-D, the end of a pipe, Ctrl-C, or `/quit`) reading stops and `closed` resolves once every
 * line read has been handed over, so the program can stop the bot, which finishes the answers
 * still pending. With the bot's signal handlers installed, Ctrl-C on a terminal stops the bot as
 * SIGINT does (it says how many answers it finishes, and a second Ctrl-C quits at once). Log
 * lines print above the prompt, never inside what is being typed; a question left unanswered
 * by a forced quit is announced before it is answered at the next start.
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
  readonly #logs: NodeJS.WritableStream | undefined;
  /** The log stream's own `write`, put back at `stop`. */
  #logsWrite: NodeJS.WritableStream['write'] | undefined;
  /** The prompt is on the screen, waiting for a line. */
  #prompting = false;
  /** Makes message ids unique across runs writing to the same store. */
  readonly #run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  #lines = 0;
  #replies = 0;
  /** `thinking…` is on the screen. */
  #thinking = false;
  #rl: Interface | undefined;
  #reading = true;
  /** Lines are handed over one after another, in the order typed; this is the last one's. */
  #handing: Promise<void> = Promise.resolve();
  #resolveClosed!: () => void;

  constructor(options: ConsoleChannelOptions = {}) {
    this.#input = options.input ?? process.stdin;
    this.#output = options.output ?? process.stdout;
    this.#session = options.session ?? 'local';
    this.#prompt = options.prompt ?? '> ';
    this.#terminal = options.terminal ?? (isTTY(this.#input) && isTTY(this.#output));
    // Standard error shares the screen when both it and the output are this terminal.
    const shared = this.#output === process.stdout && isTTY(process.stderr);
    const logs = options.logs ?? (shared ? process.stderr : false);
    this.#logs = this.#terminal && logs !== false && logs !== this.#output ? logs : undefined;
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
    // Ctrl-C on a terminal (readline reads it as a key): with signal handlers installed on
    // this process, it is the SIGINT it would be without line editing; otherwise it stops
    // reading. Either way what was typed is still handed over and answered.
    rl.on('SIGINT', () => {
      this.#prompting = false;
      this.#output.write('^C\n');
      const handled = this.#input === process.stdin && process.listenerCount('SIGINT') > 0;
      if (handled) process.kill(process.pid, 'SIGINT');
      else rl.close();
    });
    rl.on('line', (line) => {
      this.#prompting = false;
      this.#onLine(line, handlers);
    });
    rl.on('close', () => {
      this.#reading = false;
      this.#prompting = false;
      void this.#handing.then(() => this.#resolveClosed());
    });
    this.#routeLogs();
    this.#showPrompt();
  }

  /** Shows the prompt (on a terminal, while reading). */
  #showPrompt(): void {
    if (!this.#terminal || !this.#reading) return;
    this.#prompting = true;
    this.#rl?.prompt();
  }

  /** What is written to the log stream is printed above the prompt instead, until `stop`. */
  #routeLogs(): void {
    const logs = this.#logs;
    if (logs === undefined || this.#logsWrite !== undefined) return;
    this.#logsWrite = logs.write;
    logs.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      this.#above(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const done = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      if (done !== undefined) queueMicrotask(done);
      return true;
    }) as NodeJS.WritableStream['write'];
  }

  /**
   * Prints `text` on lines of its own where the cursor's line is (the prompt and what is being
   * typed, or `thinking…`), then puts that line back below it.
   */
  #above(text: string): void {
    if (text === '') return;
    const out = this.#output;
    out.write(ERASE_LINE);
    out.write(text.endsWith('\n') ? text : `${text}\n`);
    if (this.#thinking) out.write(THINKING);
    if (this.#prompting) this.#rl?.prompt(true);
    else if (this.#rl !== undefined && this.#rl.line !== '') out.write(this.#rl.line);
  }

  /**
   * Says that `turn`, left unanswered when the bot last stopped, is answered now.
   *
   * @example
   * ```ts
   * await channel.resuming(turn); // answering a question left from last time: where is order 42?
   * ```
   */
  async resuming(turn: NewMessage): Promise<void> {
    const line = `answering a question left from last time: ${oneLine(turn.content)}\n`;
    if (this.#terminal) this.#above(line);
    else this.#output.write(line);
  }

  /** A line was typed: stamp it now and queue it behind the lines before it. */
  #onLine(line: string, handlers: ChannelHandlers): void {
    const text = line.trim();
    if (text === '/quit' || text === '/exit') return void this.#rl?.close();
    if (text === '') return this.#showPrompt();
    const turn = this.#turn(text);
    this.#handing = this.#handing.then(() => this.#hand(turn, handlers));
  }

  /**
   * Hands a line to the bot, which resolves once it is committed (the next line goes then, so
   * lines are committed in the order typed); the prompt comes back once it is answered. A line
   * that could not be stored is reported, never dropped silently.
   */
  async #hand(turn: NewMessage, handlers: ChannelHandlers): Promise<void> {
    let handled = Promise.resolve();
    try {
      ({ handled } = await handlers.message(turn));
    } catch (error) {
      handlers.error(
        error instanceof ColloquyError
          ? error
          : new ColloquyError('the line could not be stored', {
              cause: error,
              conversationId: turn.conversationId,
              messageId: turn.id,
            }),
      );
    }
    void handled.then(() => this.#showPrompt());
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

  /**
   * On a terminal, `thinking…` where the reply will be printed while an agent works, erased
   * when the reply comes. Piped output gets nothing but the replies.
   */
  get typing(): TypingIndicator | undefined {
    if (!this.#terminal) return undefined;
    return {
      repeatMs: 60_000,
      show: async () => {
        if (this.#thinking) return;
        this.#thinking = true;
        this.#output.write(THINKING);
      },
      clear: async () => this.#erase(),
    };
  }

  #erase(): void {
    if (!this.#thinking) return;
    this.#thinking = false;
    this.#output.write(ERASE_LINE);
  }

  /**
   * Prints a reply's words as they come (each time after the runtime recorded them), and ends
   * its line when it is whole.
   */
  stream(_message: OutboundMessage, options?: StreamOptions): ReplyStream {
    let printed = '';
    const id = `${this.#run}-r${++this.#replies}`;
    const follow = followText(async (followed) => {
      while (printed !== followed.latest) {
        const text = followed.latest;
        await options?.showing?.({ messageIds: [id], shown: text });
        // Words are only ever added on a console: text that is not a continuation is printed whole.
        const more = text.startsWith(printed) ? text.slice(printed.length) : `\n${text}`;
        if (printed === '') this.#erase();
        this.#output.write(more);
        printed = text;
        options?.progress?.({ messageIds: [id], shown: text });
      }
    });
    return {
      update: follow.update,
      end: async (text) => {
        await follow.ending(text);
        follow.catching.kick();
        await follow.catching.settled();
        follow.catching.rethrow();
        this.#output.write('\n');
        return { messageIds: [id], timestamp: isoTimestamp() };
      },
    };
  }

  /** Where a post into this console's conversation goes (`console:<session>`, a DM). */
  placeOf(conversationId: string): PostPlace | undefined {
    if (conversationId !== this.conversationId) return undefined;
    return { conversationId, scope: 'dm', channelId: this.#session };
  }

  async send(message: OutboundMessage): Promise<SentMessage> {
    this.#erase();
    this.#output.write(`${message.content}\n`);
    return { messageIds: [`${this.#run}-r${++this.#replies}`], timestamp: isoTimestamp() };
  }

  /** Stops reading; resolves once every line already read has been handed to the bot. */
  async stop(): Promise<void> {
    if (this.#logsWrite !== undefined) this.#logs!.write = this.#logsWrite;
    this.#logsWrite = undefined;
    this.#rl?.close();
    if (this.#rl === undefined) this.#resolveClosed();
    await this.#handing;
  }
}

const THINKING = '\x1b[2mthinking…\x1b[0m';
/** Back to the start of the line, which is cleared. */
const ERASE_LINE = '\r\x1b[K';

/** `text` on one line, its control characters shown as spaces. */
function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\x00-\x1f\x7f]+/g, ' ');
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
