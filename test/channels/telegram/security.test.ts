import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NetworkError, PlatformError } from 'colloquy';
import type { ChannelHandlers } from 'colloquy';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';
import { expectNoSecret, expectRedactedCauses } from '../security.fixtures.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const TOKEN = '123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq';
const SECRET = TOKEN.split(':')[1] as string;
const outbound = { conversationId: 'telegram:1001', scope: 'dm', channelId: '1001' } as const;
const handlers: ChannelHandlers = {
  message: async () => ({ handled: Promise.resolve() }),
  edit: async () => ({ handled: Promise.resolve() }),
  delete: async () => ({ handled: Promise.resolve() }),
  capacity: async () => {},
  error: () => {},
};

/** An API root nothing listens on. */
async function unreachableApiRoot(): Promise<string> {
  const fake = await FakeTelegram.start();
  const apiRoot = fake.apiRoot;
  await fake.close();
  return apiRoot;
}

let telegram: FakeTelegram;
let channel: TelegramChannel | undefined;

beforeEach(async () => {
  telegram = await FakeTelegram.start({ token: TOKEN });
});

afterEach(async () => {
  await channel?.stop();
  channel = undefined;
  await telegram.close();
});

function channelFor(apiRoot: string, token = TOKEN) {
  return new TelegramChannel({ token, client: { apiRoot }, retry: { baseDelayMs: 1 } });
}

describe('Telegram errors never carry the bot token', () => {
  it('when the API root cannot be reached at start', async () => {
    channel = channelFor(await unreachableApiRoot());

    const error = await channel.start(handlers).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(NetworkError);
    expect((error as Error).message).toMatch(/bot\[redacted\]\/getMe failed.*ECONNREFUSED/);
    expectNoSecret(error, SECRET);
    expectRedactedCauses(error);
  });

  it('when Telegram refuses the token at start', async () => {
    const refused = '987654:AAFakeButLongEnoughToLookLikeARealTok';
    channel = channelFor(telegram.apiRoot, refused);

    const error = await channel.start(handlers).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({ code: '401' });
    expectNoSecret(error, refused.split(':')[1] as string);
    expectRedactedCauses(error);
  });

  it('when sendMessage keeps failing with a 500', async () => {
    channel = channelFor(telegram.apiRoot);
    await channel.start(handlers);
    telegram.failNext('sendMessage', { error_code: 500, description: 'Internal Server Error' }, 4);

    const error = await channel.send({ ...outbound, content: 'hi' }).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({ code: 'http_500', conversationId: 'telegram:1001' });
    expectNoSecret(error, SECRET);
    expectRedactedCauses(error);
  });

  it('when sendMessage cannot reach the API', async () => {
    channel = channelFor(telegram.apiRoot);
    await channel.start(handlers);
    telegram.failNext('sendMessage', { network: true }, 4);

    const error = await channel.send({ ...outbound, content: 'hi' }).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(NetworkError);
    expectNoSecret(error, SECRET);
    expectRedactedCauses(error);
  });
});

describe('examples/telegram-bot.ts', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'colloquy-telegram-example-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints one redacted line and exits 1 when the API cannot be reached', async () => {
    // given the example pointed at an API root nothing listens on
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TELEGRAM_BOT_TOKEN: TOKEN,
      TELEGRAM_API_ROOT: await unreachableApiRoot(),
      COLLOQUY_DB: join(dir, 'colloquy.db'),
      COLLOQUY_MODEL: '',
    };
    delete env.TELEGRAM_WEBHOOK_URL;

    // when it starts
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/telegram-bot.ts'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));

    // then it says why in one line, without the token
    expect(code).toBe(1);
    expect(output).toMatch(
      /^Could not start: Could not reach Telegram for start: .*ECONNREFUSED.*\n$/,
    );
    expect(output).not.toContain(SECRET);
  });
});
