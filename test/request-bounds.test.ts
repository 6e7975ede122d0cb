import { LogLevel } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChannelHandlers, NewMessage } from 'colloquy';
import { SlackChannel } from 'colloquy/slack';
import { FakeSlack, signSlackRequest } from 'colloquy/testing';

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
