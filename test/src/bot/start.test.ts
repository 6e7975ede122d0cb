import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Bot, ColloquyError, InMemoryConversationStore, silentLogger } from 'colloquy';
import { TelegramChannel } from 'colloquy/telegram';
import { MemoryChannel } from 'colloquy/testing';
import { startTimeoutOf } from '../../../src/bot/start.js';
import { scriptedAgent } from './bot.fixtures.js';

/** An HTTP server that takes every request and never answers it: a platform that hangs. */
async function unanswering(): Promise<Server & { url: string }> {
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(server, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  });
}

describe('Bot.start is bounded', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('rejects with the channel that did not start, and stop then ends it', async () => {
    // given a Telegram channel whose API takes the request and never answers
    const api = await unanswering();
    servers.push(api);
    const telegram = new TelegramChannel({ token: '123456:ABC', client: { apiRoot: api.url } });
    const bot = new Bot({
      channels: [telegram],
      agents: [scriptedAgent('support-agent', () => 'hi')],
      store: new InMemoryConversationStore(),
      logger: silentLogger,
      startTimeoutMs: 200,
    });

    // when the bot starts, then it gives up at the bound and says which channel and why
    const failed = await bot.start().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(ColloquyError);
    expect((failed as Error).message).toBe(
      'the telegram channel did not start within 0.2 s (it reported no error)',
    );

    // and stop ends what was still starting
    await bot.stop();
  });

  it('gives the last error the channel reported as the cause', async () => {
    // given a channel that reports why it cannot connect, and keeps trying
    const refused = new ColloquyError('connect ECONNREFUSED 127.0.0.1:1');
    const trying = {
      type: 'flaky',
      start: (handlers: { error(error: ColloquyError): void }) => {
        handlers.error(refused);
        return new Promise<void>(() => {});
      },
      stop: async () => {},
      send: async () => ({ id: 'never', messageIds: [] }),
      botIdentity: undefined,
    };
    const bot = new Bot({
      channels: [trying],
      agents: [],
      store: new InMemoryConversationStore(),
      logger: silentLogger,
      startTimeoutMs: 100,
    });
    const reported: ColloquyError[] = [];
    bot.catch((error) => void reported.push(error));

    // when the bot starts
    const failed = (await bot.start().catch((error: unknown) => error)) as ColloquyError;

    // then the one line says why, the error is the cause, and the handler heard it too
    expect(failed.message).toBe(
      'the flaky channel did not start within 0.1 s (last error: connect ECONNREFUSED 127.0.0.1:1)',
    );
    expect(failed.cause).toBe(refused);
    expect(reported).toEqual([refused]);
    await bot.stop();
  });

  it('stops the channels that started when another misses the bound', async () => {
    // given a channel that starts at once and one that never becomes ready
    const live = new MemoryChannel();
    const stopped: string[] = [];
    const hanging = {
      type: 'hanging',
      start: () => new Promise<void>(() => {}),
      stop: async () => void stopped.push('hanging'),
      send: async () => ({ id: 'never', messageIds: [] }),
      botIdentity: undefined,
    };
    const bot = new Bot({
      channels: [live, hanging],
      agents: [scriptedAgent('support-agent', () => 'hi')],
      store: new InMemoryConversationStore(),
      logger: silentLogger,
      startTimeoutMs: 100,
    });

    // when the bot starts
    const failed = (await bot.start().catch((error: unknown) => error)) as Error;

    // then it rejects once both channels are stopped: none takes turns or keeps trying
    expect(failed.message).toBe(
      'the hanging channel did not start within 0.1 s (it reported no error)',
    );
    expect(live.botIdentity).toBeUndefined();
    expect(stopped).toEqual(['hanging']);
    await expect(live.receive('hello @support-agent')).rejects.toThrow();
    await bot.stop();
  });

  it('takes its bound from startTimeoutMs, else COLLOQUY_START_TIMEOUT_MS, else 60 s', () => {
    expect(startTimeoutOf(5000, { COLLOQUY_START_TIMEOUT_MS: '100' })).toBe(5000);
    expect(startTimeoutOf(undefined, { COLLOQUY_START_TIMEOUT_MS: '1500' })).toBe(1500);
    expect(startTimeoutOf(undefined, {})).toBe(60_000);
    expect(startTimeoutOf(Infinity, {})).toBe(Infinity);
    expect(() => startTimeoutOf(undefined, { COLLOQUY_START_TIMEOUT_MS: 'soon' })).toThrow(
      'COLLOQUY_START_TIMEOUT_MS must be a positive number of milliseconds, not "soon"',
    );
    expect(() => startTimeoutOf(0, {})).toThrow(
      'BotOptions.startTimeoutMs must be a positive number of milliseconds, not "0"',
    );
  });
});
