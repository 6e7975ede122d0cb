import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

/** Runs an example with these settings (and nothing from this environment); its exit and output. */
async function example(file: string, env: Record<string, string>) {
  const result = await run(process.execPath, ['--import', 'tsx', `examples/${file}`], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 30_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code,
      output: `${error.stdout ?? ''}${error.stderr ?? ''}`,
    }),
  );
  return result;
}

describe('examples refuse bad settings in one line', () => {
  it('slack-bot: a PORT that is not a port number', async () => {
    const { code, output } = await example('slack-bot.ts', {
      SLACK_BOT_TOKEN: 'xoxb-1-2-abc',
      SLACK_SIGNING_SECRET: 'secret',
      PORT: 'eighty',
    });
    expect(code).toBe(1);
    expect(output).toBe('PORT must be a port number (0 picks a free one), not "eighty".\n');
  });

  it('telegram-bot: a webhook URL that is not a URL, and a bad PORT', async () => {
    const token = { TELEGRAM_BOT_TOKEN: '123456:ABC' };
    const badUrl = await example('telegram-bot.ts', { ...token, TELEGRAM_WEBHOOK_URL: 'bot' });
    expect(badUrl.code).toBe(1);
    expect(badUrl.output).toMatch(/^TELEGRAM_WEBHOOK_URL must be a URL such as https:.*\n$/);

    const badPort = await example('telegram-bot.ts', {
      ...token,
      TELEGRAM_WEBHOOK_URL: 'https://bot.example.com/telegram',
      PORT: '70000',
    });
    expect(badPort.code).toBe(1);
    expect(badPort.output).toBe('PORT must be a port number (0 picks a free one), not "70000".\n');
  });

  it('discord-bot: a shard count that is not a whole number', async () => {
    const { code, output } = await example('discord-bot.ts', {
      DISCORD_BOT_TOKEN: 'token',
      DISCORD_SHARDS: 'two',
    });
    expect(code).toBe(1);
    expect(output).toBe('DISCORD_SHARDS must be a whole number of shards, 1 or more, not "two".\n');
  });

  it.each([
    ['telegram-bot.ts', { TELEGRAM_BOT_TOKEN: '123456:ABC', TELEGRAM_API_ROOT: 'localhost:8081' }],
    [
      'slack-bot.ts',
      { SLACK_BOT_TOKEN: 'xoxb-1-2-abc', SLACK_SIGNING_SECRET: 'secret', SLACK_API_URL: 'api' },
    ],
    ['discord-bot.ts', { DISCORD_BOT_TOKEN: 'token', DISCORD_API_URL: 'not a url' }],
  ])('%s: an API URL override that is not an http(s) URL', async (file, env) => {
    const [name, value] = Object.entries(env).at(-1) ?? [];
    const { code, output } = await example(file, env);
    expect(code).toBe(1);
    expect(output).toBe(
      `${name} must be an http(s) URL such as http://127.0.0.1:8080, not "${value}"\n`,
    );
  });
});
