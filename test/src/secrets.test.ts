import { createOpenAI } from '@ai-sdk/openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BaseAgent,
  Bot,
  InMemoryConversationStore,
  StoreError,
  createConsoleLogger,
  modelFromEnv,
  silentLogger,
} from 'colloquy';
import type { ColloquyError, ConversationStore, Logger } from 'colloquy';
import { Capture } from '../../src/capture.js';
import { redactText } from '../../src/logger.js';
import { FakeOpenAIServer, MemoryChannel } from 'colloquy/testing';
import { turn } from './assemble.fixtures.js';
import { scriptedAgent } from './bot/bot.fixtures.js';

// A model server that quotes the key it was sent ("Incorrect API key provided: …") must not
// put that key in an error a bot reports or logs.

/** A configured key that looks like nothing in particular: only its value can find it. */
const PLAIN_KEY = 'colloquy-test-model-key-9f8e7d6c5b4a39281706';
/** A key of OpenAI's shape, passed in code: only its shape can find it. */
const SK_KEY = 'sk-proj-Q8vZ3kLmN5pR7tW9yB2dF4hJ6xC1aE0gUsYiOoPq';

const alice = { kind: 'user' as const, id: 'memory:alice', displayName: 'Alice' };
let server: FakeOpenAIServer;
const saved = { ...process.env };

beforeEach(async () => {
  server = await new FakeOpenAIServer().start();
});

afterEach(async () => {
  await server.close();
  for (const key of [
    'OPENAI_API_KEY',
    'COLLOQUY_MODEL',
    'COLLOQUY_MODEL_BASE_URL',
    'COLLOQUY_MODEL_API_KEY',
  ]) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
});

/** Runs one turn against the 401 and returns what was reported and what was logged. */
async function oneRefusedTurn(
  model: BaseAgent['model'],
  key: string,
): Promise<{ errors: ColloquyError[]; logged: string }> {
  const refusal = {
    status: 401,
    error: `Incorrect API key provided: ${key}. You can find your API key at https://platform.openai.com/account/api-keys.`,
  };
  server.reply(refusal, refusal);
  class SupportAgent extends BaseAgent {
    name = 'support-agent';
    description = 'Answers questions';
    instructions = 'Be brief.';
    override model = model;
    override logger = silentLogger;
  }
  const channel = new MemoryChannel();
  let logged = '';
  const logger = createConsoleLogger({ level: 'debug', write: (line) => void (logged += line) });
  const bot = new Bot({
    channels: [channel],
    agents: [new SupportAgent()],
    store: new InMemoryConversationStore(),
    logger,
  });
  const errors: ColloquyError[] = [];
  await bot.start();
  await channel.receive('@support-agent hello', { from: alice }); // the default handler logs it
  bot.catch((error) => void errors.push(error));
  await channel.receive('@support-agent again', { from: alice });
  await bot.stop();
  return { errors, logged };
}

/** Everything a handler could print of an error: message, stack, causes, JSON. */
function everything(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 6; depth++) {
    const e = current as Error & Record<string, unknown>;
    parts.push(String(e.message), String(e.stack), JSON.stringify(e));
    for (const value of Object.values(e)) if (typeof value === 'string') parts.push(value);
    current = e.cause;
  }
  return parts.join('\n');
}

describe('model keys in errors and logs', () => {
  it('redacts a key from COLLOQUY_MODEL_API_KEY that the model server quotes', async () => {
    process.env.COLLOQUY_MODEL_API_KEY = PLAIN_KEY;
    process.env.COLLOQUY_MODEL = 'openai-compatible:m';
    process.env.COLLOQUY_MODEL_BASE_URL = server.baseURL;

    const { errors, logged } = await oneRefusedTurn(modelFromEnv(), PLAIN_KEY);

    expect(server.requests.length).toBeGreaterThan(0);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.name).toBe('AgentError');
    expect(errors[0]?.message).toContain('Incorrect API key provided: [redacted]');
    expect(everything(errors[0])).not.toContain(PLAIN_KEY);
    expect(logged).toContain('AgentError');
    expect(logged).not.toContain(PLAIN_KEY);
  });

  it('redacts a key of a known shape passed in code', async () => {
    const model = createOpenAI({ apiKey: SK_KEY, baseURL: server.baseURL }).chat('gpt-4o-mini');

    const { errors, logged } = await oneRefusedTurn(model, SK_KEY);

    expect(errors).toHaveLength(1);
    expect(everything(errors[0])).not.toContain(SK_KEY);
    expect(everything(errors[0])).not.toContain(SK_KEY.slice(8, 30));
    expect(logged).toContain('AgentError');
    expect(logged).not.toContain(SK_KEY.slice(8, 30));
  });
});

describe('redactText', () => {
  it('masks common key shapes', () => {
    const text = [
      'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789',
      'sk-AbCdEfGhIjKlMnOpQrStUvWx',
      'sk-abc12***************************xyz9',
      'AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q',
      'ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789',
      'xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
    ].join(' ');
    expect(redactText(text)).toBe(Array(6).fill('[redacted]').join(' '));
  });

  it('masks the values of the model keys in the environment', () => {
    process.env.OPENAI_API_KEY = PLAIN_KEY;
    expect(redactText(`key ${PLAIN_KEY} refused`)).toBe('key [redacted] refused');
  });

  it('leaves ordinary words alone', () => {
    expect(redactText('ask-me-anything sk-8 task-force')).toBe('ask-me-anything sk-8 task-force');
  });
});

/** A token as Telegram issues them, here inside the Bot API URL a failed request names. */
const TELEGRAM_TOKEN = '123456789:AAHfakeFAKEfakeFAKEfakeFAKEfake1234';
const BOT_API_FAILURE = `request to https://api.telegram.org/bot${TELEGRAM_TOKEN}/getChat failed, reason: ECONNRESET`;

/**
 * A logger as pino or winston is with its error serialiser: one JSON line per call, an error
 * written with its message, stack and causes.
 */
function jsonLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const plain = (value: unknown): unknown =>
    value instanceof Error
      ? { name: value.name, message: value.message, stack: value.stack, cause: plain(value.cause) }
      : value;
  const at =
    (level: string) =>
    (msg: string, fields: Record<string, unknown> = {}) => {
      const serialised = Object.entries(fields).map(([key, value]) => [key, plain(value)]);
      lines.push(JSON.stringify({ level, msg, ...Object.fromEntries(serialised) }));
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('a logger of your own', () => {
  it('given to the bot, never receives a bot token from a failed turn or a failing handler', async () => {
    // given a bot with its own logger, an interceptor whose Bot API call failed, and an error
    // handler that fails the same way on the second turn
    const logger = jsonLogger();
    const channel = new MemoryChannel({ scope: 'dm' });
    const bot = new Bot({
      channels: [channel],
      agents: [scriptedAgent('support', () => 'hi')],
      store: new InMemoryConversationStore(),
      logger,
      interceptors: [
        () => {
          throw new Error(BOT_API_FAILURE);
        },
      ],
    });
    await bot.start();
    try {
      // when a turn fails with the default handler, then with a handler that throws
      await channel.receive('hello');
      await bot.idle();
      bot.catch((error) => {
        throw new Error(`could not report: ${BOT_API_FAILURE}`, { cause: error });
      });
      await channel.receive('again');
      await bot.idle();
    } finally {
      await bot.stop();
    }

    // then both failures reached the logger, stacks and causes included, with the token masked
    const logged = logger.lines.join('\n');
    expect(logger.lines.filter((line) => line.includes('getChat')).length).toBeGreaterThan(1);
    expect(logged).toContain(
      '"stack":"Error: request to https://api.telegram.org/bot[redacted]/getChat',
    );
    expect(logged).toContain('the error handler threw');
    expect(logged).not.toContain(TELEGRAM_TOKEN);
  });

  it('given to an agent, never receives a bot token from a plugin that failed', async () => {
    // given an agent with its own logger
    const logger = jsonLogger();
    class LookupAgent extends BaseAgent {
      name = 'lookup-agent';
      description = 'Looks chats up';
      instructions = 'Be brief.';
      override logger = logger;
    }

    // when a plugin it registers fails calling the Bot API
    new LookupAgent().use({
      name: 'chat-lookup',
      onRegistered: () => Promise.reject(new Error(BOT_API_FAILURE)),
    });
    await new Promise((resolve) => setImmediate(resolve));

    // then the failure reached the logger with the token masked
    expect(logger.lines.join('\n')).toContain('bot[redacted]/getChat');
    expect(logger.lines.join('\n')).not.toContain(TELEGRAM_TOKEN);
  });

  it('given to capture, never receives a password from a store failure it reports', async () => {
    // given capture with its own logger, over a store that refuses a turn with a driver error
    // naming its connection string
    const logger = jsonLogger();
    const store = new InMemoryConversationStore();
    const refusing: ConversationStore = Object.assign(Object.create(store) as ConversationStore, {
      append: () =>
        Promise.reject(
          new StoreError('the store refused the turn', {
            transient: false,
            cause: new Error('no pg_hba.conf entry for postgres://bot:Tr0ub4dor-and-3@db/chat'),
          }),
        ),
    });
    const capture = new Capture(refusing, { logger });
    // when a turn is written
    await expect(capture.write({ kind: 'append', message: turn(alice, 'hello') })).rejects.toThrow(
      StoreError,
    );
    await capture.close();

    // then the failure is logged with its cause, the password masked
    const logged = logger.lines.join('\n');
    expect(logged).toContain('no pg_hba.conf entry for postgres://bot:[redacted]@db/chat');
    expect(logged).not.toContain('Tr0ub4dor-and-3');
  });
});
