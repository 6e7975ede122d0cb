import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NetworkError } from 'colloquy';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';
import { idleHandlers as handlers } from '../../contracts/channel-contract.js';
import { expectNoSecret, expectRedactedCauses } from '../../contracts/secrets.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const TOKEN = '123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq';
const SECRET = TOKEN.split(':')[1] as string;
const outbound = { conversationId: 'telegram:1001', scope: 'dm', channelId: '1001' } as const;

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
