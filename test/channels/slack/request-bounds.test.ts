import { request } from 'node:http';
import { LogLevel } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChannelHandlers, NewMessage } from 'colloquy';
import { SlackChannel } from 'colloquy/slack';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeSlack, FakeTelegram, signSlackRequest } from 'colloquy/testing';

// Requests that are signed (or carry the right secret) and still refused: a timestamp too far
// from now, a body too large.

function recording(): { handlers: ChannelHandlers; messages: NewMessage[] } {
  const messages: NewMessage[] = [];
  return {
    messages,
    handlers: {
      message: async (message) => (messages.push(message), { handled: Promise.resolve() }),
      edit: async () => ({ handled: Promise.resolve() }),
      delete: async () => ({ handled: Promise.resolve() }),
      capacity: async () => {},
      error: () => {},
    },
  };
}

describe('the Slack events endpoint', () => {
  let slack: FakeSlack | undefined;
  let channel: SlackChannel | undefined;

  afterEach(async () => {
    await channel?.stop();
    await slack?.close();
  });

  async function post(url: string, secret: string, skewSeconds: number): Promise<number> {
    const body = JSON.stringify({
      token: 'unused',
      team_id: 'T0FAKE',
      api_app_id: 'A0FAKE',
      type: 'event_callback',
      event_id: `Ev0SKEW${String(skewSeconds).replace('-', 'M')}`,
      event_time: 1763719800,
      event: {
        type: 'message',
        channel: 'D0ALICE',
        channel_type: 'im',
        user: 'U0ALICE',
        text: `sent ${skewSeconds} s off`,
        ts: `${1763719800 + skewSeconds}.000100`,
      },
    });
    const timestamp = String(Math.floor(Date.now() / 1000) + skewSeconds);
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-slack-request-timestamp': timestamp,
        'x-slack-signature': signSlackRequest(secret, timestamp, body),
      },
      body,
    });
    await response.text();
    return response.status;
  }

  it('refuses a validly signed request whose timestamp is more than 5 minutes off, either way', async () => {
    slack = await FakeSlack.start();
    channel = new SlackChannel({
      token: slack.token,
      signingSecret: slack.signingSecret,
      port: 0,
      host: '127.0.0.1',
      logLevel: LogLevel.ERROR,
      clientOptions: { slackApiUrl: slack.slackApiUrl, retryConfig: { retries: 0 } },
    });
    const { handlers, messages } = recording();
    await channel.start(handlers);
    const url = channel.eventsUrl as string;

    const statuses = [
      await post(url, slack.signingSecret, 10 * 60),
      await post(url, slack.signingSecret, -10 * 60),
      await post(url, slack.signingSecret, 4 * 60),
      await post(url, slack.signingSecret, -4 * 60),
    ];

    expect(statuses).toEqual([401, 401, 200, 200]);
    expect(messages.map((m) => m.content)).toEqual(['sent 240 s off', 'sent -240 s off']);
  });
});

/**
 * POSTs `total` bytes (a JSON-looking stream of spaces) to `url`, writing only as fast as the
 * server reads; resolves with the answer's status and how many bytes had been written when it
 * came (or when the server closed the connection).
 */
function flood(
  url: string,
  total: number,
  headers: Record<string, string>,
): Promise<{ status: number | undefined; written: number }> {
  return new Promise((resolve) => {
    let written = 0;
    let status: number | undefined;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      resolve({ status, written });
      req.destroy();
    };
    const req = request(url, { method: 'POST', headers }, (res) => {
      status = res.statusCode;
      res.resume();
      finish();
    });
    req.on('error', finish);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = () => {
      while (!done && written < total) {
        written += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!done) req.end();
    };
    req.write('{"update_id":1,"message":');
    pump();
  });
}

describe('the Telegram webhook', () => {
  let telegram: FakeTelegram | undefined;
  let channel: TelegramChannel | undefined;

  afterEach(async () => {
    await channel?.stop();
    await telegram?.close();
  });

  async function webhookChannel(maxBodyBytes?: number): Promise<string> {
    telegram = await FakeTelegram.start();
    channel = new TelegramChannel({
      token: telegram.token,
      mode: 'webhook',
      client: { apiRoot: telegram.apiRoot },
      webhook: {
        secretToken: 'right-secret',
        port: 0,
        host: '127.0.0.1',
        ...(maxBodyBytes !== undefined && { maxBodyBytes }),
      },
    });
    await channel.start(recording().handlers);
    return `http://127.0.0.1:${channel.webhookPort as number}/telegram`;
  }

  const HUNDRED_MB = 100 * 1024 * 1024;
  const secret = { 'x-telegram-bot-api-secret-token': 'right-secret' };

  it('answers 413 to a 100 MB body with the right secret, without reading it all', async () => {
    const url = await webhookChannel();

    const declared = await flood(url, HUNDRED_MB, {
      ...secret,
      'content-type': 'application/json',
      'content-length': String(HUNDRED_MB + 25),
    });
    const chunked = await flood(url, HUNDRED_MB, { ...secret, 'content-type': 'application/json' });

    expect(declared.status).toBe(413);
    expect(chunked.status).toBe(413);
    expect(declared.written).toBeLessThan(HUNDRED_MB / 4);
    expect(chunked.written).toBeLessThan(HUNDRED_MB / 4);
  });

  it('takes a configured cap and still accepts an ordinary update', async () => {
    const url = await webhookChannel(64 * 1024);
    const update = {
      update_id: 7,
      message: (telegram as FakeTelegram).buildMessage({
        chat: { id: 1001, type: 'private', first_name: 'Ada' },
        from: { id: 1001, is_bot: false, first_name: 'Ada' },
        text: 'hello',
      }),
    };

    const small = await (telegram as FakeTelegram).postWebhook(url, update, 'right-secret');
    const large = await flood(url, 1024 * 1024, { ...secret, 'content-type': 'application/json' });

    expect(small.status).toBe(200);
    expect(large.status).toBe(413);
  });
});
