import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Api } from 'grammy';
import { describe, expect, it } from 'vitest';
import { NetworkError, PlatformError, RateLimitError } from 'colloquy';
import { neverSent, platformError, sendParts } from '../../../channels/shared/platform.js';

/** A loopback origin, and how to stop it; `reset` drops every request without an answer. */
async function loopback(reset: boolean) {
  const server = createServer((req) => void req.socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  if (!reset) await close(); // nothing listens there: connections are refused
  return { origin, close };
}

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

describe('neverSent: a request provably never reached the platform', () => {
  it('says so for a refused connection, from fetch and from grammy', async () => {
    // given an address nothing listens on
    const { origin } = await loopback(false);

    // when fetch (as the Slack client uses it) and grammy call it
    const fetched = await fetch(`${origin}/api/chat.postMessage`).catch((err: unknown) => err);
    const grammy = await new Api('123:abc', { apiRoot: origin })
      .getMe()
      .catch((err: unknown) => err);

    // then both failures are known to have sent nothing
    expect(neverSent(fetched)).toBe(true);
    expect(neverSent(grammy)).toBe(true);
  });

  it('does not for a connection dropped after the request went out', async () => {
    // given a server that drops every request it reads
    const { origin, close } = await loopback(true);

    // when fetch and grammy call it
    const fetched = await fetch(`${origin}/api/chat.postMessage`).catch((err: unknown) => err);
    const grammy = await new Api('123:abc', { apiRoot: origin })
      .getMe()
      .catch((err: unknown) => err);
    await close();

    // then the platform may have acted on either
    expect(fetched).toBeInstanceOf(Error);
    expect(grammy).toBeInstanceOf(Error);
    expect(neverSent(fetched)).toBe(false);
    expect(neverSent(grammy)).toBe(false);
  });
});
