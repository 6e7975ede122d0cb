import { afterEach, describe, expect, it, vi } from 'vitest';
import { inspect } from 'node:util';
import {
  consoleLogger,
  createConsoleLogger,
  redact,
  redactError,
  redactingLogger,
  redactText,
  silentLogger,
} from '../../src/logger.js';
import type { Logger } from '../../src/logger.js';
import { StoreError } from '../../src/errors.js';

const slackBot = 'xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx';
const slackApp = 'xapp-1-A0123456789-1234567890123-0123456789abcdef0123456789abcdef';
const telegram = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq';
const discord = 'MTA5ODc2NTQzMjEwOTg3NjU0Mw.GxYzAb.abcdefghijklmnopqrstuvwxyz0123456789AB';

describe('redact', () => {
  it('masks values under keys that look like secrets', () => {
    const fields = {
      token: 'abc',
      botToken: 'abc',
      signingSecret: 'abc',
      password: 'hunter2',
      Authorization: 'Bearer abc',
      apiKey: 'sk-abc',
      api_key: 'sk-abc',
      conversationId: 'telegram:42',
      tokenCap: 2000,
    };
    expect(redact(fields)).toEqual({
      token: '[redacted]',
      botToken: '[redacted]',
      signingSecret: '[redacted]',
      password: '[redacted]',
      Authorization: '[redacted]',
      apiKey: '[redacted]',
      api_key: '[redacted]',
      conversationId: 'telegram:42',
      tokenCap: 2000,
    });
  });

  it.each([
    ['Slack bot', slackBot],
    ['Slack app-level', slackApp],
    ['Telegram', telegram],
    ['Discord', discord],
  ])('masks a %s token inside any string, however deep', (_platform, token) => {
    const fields = { url: `https://api.example/bot${token}/getMe`, nested: [{ note: token }] };
    expect(redact(fields)).toEqual({
      url: 'https://api.example/bot[redacted]/getMe',
      nested: [{ note: '[redacted]' }],
    });
  });

  it('masks a Telegram token of any length in a Bot API URL', () => {
    expect(redactText('request to http://127.0.0.1:9/bot42:wrong/getMe failed')).toBe(
      'request to http://127.0.0.1:9/bot[redacted]/getMe failed',
    );
    expect(redactText('GET /file/bot123456:AA-b_c/photos/1.jpg')).toBe(
      'GET /file/bot[redacted]/photos/1.jpg',
    );
  });

  it('masks bearer credentials and webhook URL tokens', () => {
    expect(redactText('Authorization: Bearer sk-live-0123456789')).toBe(
      'Authorization: Bearer [redacted]',
    );
    expect(
      redactText('POST https://discord.com/api/v10/webhooks/1100000000000000001/' + 'a'.repeat(68)),
    ).toBe('POST https://discord.com/api/v10/webhooks/1100000000000000001/[redacted]');
    expect(
      redactText('https://hooks.slack.com/services/T0001/B0001/XXXXXXXXXXXXXXXXXXXXXXXX'),
    ).toBe('https://hooks.slack.com/services/T0001/B0001/[redacted]');
  });

  it('leaves ordinary ids and timestamps alone', () => {
    const text = 'slack:T1:C1:1700000000.000200 at 2026-01-01T00:00:00.000Z by telegram:1001';
    expect(redactText(text)).toBe(text);
  });

  it('turns errors into plain fields and survives cycles', () => {
    const cause = new Error(`401 for ${telegram}`);
    const error = new StoreError('failed', { cause, conversationId: 'telegram:42' });
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    expect(redact({ error, loop })).toEqual({
      error: {
        name: 'StoreError',
        message: 'failed',
        conversationId: 'telegram:42',
        cause: { name: 'Error', message: '401 for [redacted]' },
      },
      loop: { name: 'loop', self: '[circular]' },
    });
  });

  it('does not change the fields it was given', () => {
    const fields = { token: 'abc' };
    redact(fields);
    expect(fields).toEqual({ token: 'abc' });
  });
});

describe('createConsoleLogger', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  const now = () => new Date('2026-01-01T00:00:00.000Z');

  it('writes one redacted line per call', () => {
    const lines: string[] = [];
    const logger = createConsoleLogger({ write: (line) => lines.push(line), now });
    logger.warn('capture failed\nbadly', { conversationId: 'telegram:42', token: telegram });
    expect(lines).toEqual([
      '2026-01-01T00:00:00.000Z WARN capture failed\\nbadly {"conversationId":"telegram:42","token":"[redacted]"}\n',
    ]);
  });

  it('writes info and above by default', () => {
    vi.stubEnv('COLLOQUY_LOG_LEVEL', '');
    const lines: string[] = [];
    const logger = createConsoleLogger({ write: (line) => lines.push(line), now });
    logger.debug('d');
    logger.info('i');
    logger.error('e');
    expect(lines.map((line) => line.split(' ')[1])).toEqual(['INFO', 'ERROR']);
  });

  it('follows COLLOQUY_LOG_LEVEL', () => {
    const lines: string[] = [];
    const logger = createConsoleLogger({ write: (line) => lines.push(line), now });
    vi.stubEnv('COLLOQUY_LOG_LEVEL', 'debug');
    logger.debug('shown');
    vi.stubEnv('COLLOQUY_LOG_LEVEL', 'error');
    logger.warn('hidden');
    vi.stubEnv('COLLOQUY_LOG_LEVEL', 'silent');
    logger.error('hidden too');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('DEBUG shown');
  });

  it('the default console logger writes to stderr', () => {
    vi.stubEnv('COLLOQUY_LOG_LEVEL', 'info');
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    consoleLogger.info('hello', { apiKey: 'sk-secret' });
    expect(write).toHaveBeenCalledTimes(1);
    expect(String(write.mock.calls[0]?.[0])).toMatch(/ INFO hello \{"apiKey":"\[redacted\]"\}\n$/);
  });

  it('the silent logger says nothing', () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    silentLogger.error('nothing');
    expect(write).not.toHaveBeenCalled();
  });
});

describe('redactingLogger', () => {
  it('hands the logger it wraps masked fields, errors kept as Errors with masked stacks', () => {
    // given a logger that keeps what it is given
    const calls: [string, Record<string, unknown> | undefined][] = [];
    const keep = (msg: string, fields?: Record<string, unknown>) => void calls.push([msg, fields]);
    const logger = redactingLogger({ debug: keep, info: keep, warn: keep, error: keep });
    const cause = new Error(`GET /bot${telegram}/getMe failed`);

    // when colloquy logs through it
    logger.error(`failed with ${slackBot}`, {
      conversationId: 'telegram:42',
      botToken: slackBot,
      cause: new StoreError('write failed', { cause, conversationId: 'telegram:42' }),
    });

    // then the message and fields are masked, and the error is still an Error with its causes
    const [msg, fields] = calls[0]!;
    expect(msg).toBe('failed with [redacted]');
    expect(fields).toMatchObject({ conversationId: 'telegram:42', botToken: '[redacted]' });
    const logged = fields?.cause as Error;
    expect(logged).toBeInstanceOf(Error);
    expect(logged).toMatchObject({ name: 'StoreError', conversationId: 'telegram:42' });
    expect(logged.cause).toBeInstanceOf(Error);
    expect((logged.cause as Error).stack).toContain('GET /bot[redacted]/getMe failed');
    expect(inspect(logged, { depth: 5 })).not.toContain(telegram);
  });

  it('hands back a logger that masks already', () => {
    const logger: Logger = createConsoleLogger();
    expect(redactingLogger(logger)).toBe(logger);
    expect(redactingLogger(consoleLogger)).toBe(consoleLogger);
    expect(redactingLogger(silentLogger)).toBe(silentLogger);
    const wrapped = redactingLogger({ ...silentLogger });
    expect(redactingLogger(wrapped)).toBe(wrapped);
  });
});

describe('redactError', () => {
  it('copies a library error into a plain Error without its request', () => {
    // given an HTTP client error holding the URL, headers and the error underneath
    const underneath = Object.assign(
      new Error(`request to https://api.telegram.org/bot${telegram}/getMe failed`),
      { code: 'ECONNREFUSED', errno: -111, syscall: 'connect', address: '127.0.0.1' },
    );
    class HttpError extends Error {
      override name = 'HttpError';
      config = { headers: { Authorization: `Bearer ${slackBot}` }, url: `/bot${telegram}/getMe` };
      error = underneath;
    }
    const original = new HttpError("Network request for 'getMe' failed!");

    // when it is copied
    const copy = redactError(original);

    // then the copy keeps what failed and nothing of the request
    expect(Object.getPrototypeOf(copy)).toBe(Error.prototype);
    expect(copy).toMatchObject({
      name: 'HttpError',
      message: "Network request for 'getMe' failed!",
    });
    expect(Object.keys(copy)).toEqual(['name']);
    expect(copy.cause).toMatchObject({
      message: 'request to https://api.telegram.org/bot[redacted]/getMe failed',
      code: 'ECONNREFUSED',
      errno: -111,
      syscall: 'connect',
    });
    expect(copy.cause).not.toHaveProperty('address');
    const printed = [inspect(copy, { depth: 10 }), String(copy.stack), JSON.stringify(copy)];
    for (const text of printed) {
      expect(text).not.toContain(telegram);
      expect(text).not.toContain(slackBot);
    }
  });

  it('copies an API error object and a thrown string', () => {
    const apiError = { error_code: 401, description: `Unauthorized ${telegram}`, method: 'getMe' };
    expect(redactError(apiError)).toMatchObject({
      message: 'Unauthorized [redacted]',
      error_code: 401,
      description: 'Unauthorized [redacted]',
    });
    expect(redactError(`failed: ${discord}`).message).toBe('failed: [redacted]');
  });
});
