import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  consoleLogger,
  createConsoleLogger,
  redact,
  redactText,
  silentLogger,
} from '../src/logger.js';
import { StoreError } from '../src/errors.js';

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
