import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale } from './channels/console/bot.fixtures.js';
import { tempDirs } from './fixtures/temp-dirs.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

// A platform API that takes every request and never answers it: the bot cannot connect.
let api: Server;
let url: string;
const temp = tempDirs();
beforeAll(async () => {
  buildIfStale();
  api = createServer(() => {});
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
}, 300_000);
afterAll(async () => {
  api.closeAllConnections();
  await new Promise((resolve) => api.close(resolve));
});

/** Runs a built example with these settings only; its exit code and output. */
async function example(name: string, env: Record<string, string>) {
  return run(process.execPath, [join(ROOT, 'dist', 'examples', `${name}.js`)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 50_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code,
      output: `${error.stdout ?? ''}${error.stderr ?? ''}`,
    }),
  );
}

describe('an example that cannot connect exits with why in one line', () => {
  it.each([
    ['telegram', () => ({ TELEGRAM_BOT_TOKEN: '123456:ABC', TELEGRAM_API_ROOT: url })],
    [
      'slack',
      () => ({
        SLACK_BOT_TOKEN: 'xoxb-1-2-abc',
        SLACK_SIGNING_SECRET: 'secret',
        SLACK_API_URL: `${url}/api/`,
        PORT: '0',
      }),
    ],
    ['discord', () => ({ DISCORD_BOT_TOKEN: 'token', DISCORD_API_URL: `${url}/api` })],
  ])(
    '%s-bot, its platform never answering',
    async (platform, env) => {
      // When the example starts against a platform that never answers, with a 1 s bound
      const { code, output } = await example(`${platform}-bot`, {
        ...env(),
        COLLOQUY_DB: join(temp.make('examples-start'), `${platform}.db`),
        COLLOQUY_START_TIMEOUT_MS: '1000',
      });

      // Then it exits non-zero, its last line saying which channel did not start
      expect(code).toBe(1);
      expect(output.trimEnd().split('\n').at(-1)).toBe(
        `Could not start: the ${platform} channel did not start within 1 s (it reported no error)`,
      );
    },
    60_000,
  );
});
