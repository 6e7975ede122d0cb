import { describe, expect, it } from 'vitest';
import { NetworkError, PlatformError, RateLimitError } from 'colloquy';
import { platformError, sendParts } from '../../../channels/shared/platform.js';

describe('platformError: one policy for every platform', () => {
  const cause = new Error('the library said so');

  it('makes a refusal a permanent PlatformError with the platform code', () => {
    const error = platformError('slack', 'chat.postMessage', {
      kind: 'refused',
      code: 'not_in_channel',
    });

    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({
      platform: 'slack',
      code: 'not_in_channel',
      transient: false,
      message: 'Slack refused chat.postMessage: not_in_channel',
    });
  });

  it('makes a rate limit a transient RateLimitError with the wait', () => {
    const error = platformError(
      'telegram',
      'sendMessage',
      { kind: 'rate-limited', retryAfterMs: 30_000 },
      { cause, conversationId: 'telegram:42' },
    );

    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({
      name: 'RateLimitError',
      code: 'rate_limited',
      transient: true,
      retryAfterMs: 30_000,
      conversationId: 'telegram:42',
      cause,
    });
  });

  it('makes a 5xx a transient PlatformError http_<status>, and another status a permanent one', () => {
    const server = platformError('discord', 'a message in 1', { kind: 'http', status: 503 });
    const other = platformError('discord', 'a message in 1', { kind: 'http', status: 413 });

    expect(server).toMatchObject({ name: 'PlatformError', code: 'http_503', transient: true });
    expect(other).toMatchObject({ name: 'PlatformError', code: 'http_413', transient: false });
  });

  it('makes no answer at all a transient NetworkError', () => {
    const error = platformError('slack', 'auth.test', {
      kind: 'unreachable',
      detail: 'ECONNREFUSED',
    });

    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({
      transient: true,
      message: 'Could not reach Slack for auth.test: ECONNREFUSED',
    });
  });
});

describe('sendParts', () => {
  const at = (second: number) => new Date(Date.UTC(2026, 2, 11, 10, 0, second)).toISOString();

  it('posts the parts in order and returns their ids and the first timestamp', async () => {
    const posted: string[] = [];

    const sent = await sendParts(
      ['one', 'two', 'three'],
      async (part, index) => {
        posted.push(part);
        return { id: `m${index + 1}`, timestamp: at(index) };
      },
      () => new PlatformError('acme', 'unused'),
    );

    expect(posted).toEqual(['one', 'two', 'three']);
    expect(sent).toEqual({ messageIds: ['m1', 'm2', 'm3'], timestamp: at(0) });
  });

  it('throws the wrapped error once partPosted was told which parts went out', async () => {
    const refused = new Error('refused part 3');
    const told: (readonly string[])[] = [];

    const error = await sendParts(
      ['one', 'two', 'three'],
      async (_part, index) => {
        if (index === 2) throw refused;
        return { id: `m${index + 1}` };
      },
      (cause, index) => new PlatformError('acme', `part ${index + 1} failed`, { cause }),
      { partPosted: async (ids) => void told.push(ids) },
    ).catch((e: unknown) => e);

    expect(told).toEqual([['m1'], ['m1', 'm2']]);
    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({
      message: 'part 3 failed',
      cause: refused,
    });
  });

  it('tells partPosted nothing when the first part fails', async () => {
    const told: (readonly string[])[] = [];
    const error = await sendParts(
      ['one', 'two'],
      async () => Promise.reject(new Error('down')),
      (cause) => new NetworkError('down', { cause }),
      { partPosted: async (ids) => void told.push(ids) },
    ).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(NetworkError);
    expect(told).toEqual([]);
  });

  it('posts only the parts after skipParts, each with its index in the whole reply', async () => {
    const posted: [string, number][] = [];

    const sent = await sendParts(
      ['one', 'two', 'three'],
      async (part, index) => {
        posted.push([part, index]);
        return { id: `m${index + 1}`, timestamp: at(index) };
      },
      (cause) => new NetworkError('down', { cause }),
      { skipParts: 1 },
    );

    expect(posted).toEqual([
      ['two', 1],
      ['three', 2],
    ]);
    expect(sent).toEqual({ messageIds: ['m2', 'm3'], timestamp: at(1) });
  });
});
