import { LogLevel } from '@slack/bolt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NetworkError } from 'colloquy';
import { SlackChannel, formatSlackText, toColloquyError } from 'colloquy/slack';
import type { SlackChannelOptions } from 'colloquy/slack';
import { FakeSlack } from 'colloquy/testing';
import { idleHandlers as handlers } from '../../contracts/channel-contract.js';
import { expectNoSecret, expectRedactedCauses } from '../../contracts/secrets.js';

const TOKEN = 'xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx';
const SECRET = 'AbCdEfGhIjKlMnOpQrStUvWx';
const outbound = {
  conversationId: 'slack:T0FAKE:C0GENERAL',
  scope: 'channel',
  channelId: 'C0GENERAL',
} as const;

let slack: FakeSlack;
let channel: SlackChannel | undefined;

beforeEach(async () => {
  slack = await FakeSlack.start({ token: TOKEN });
});

afterEach(async () => {
  await channel?.stop();
  channel = undefined;
  await slack.close();
});

function channelFor(slackApiUrl: string, options: Partial<SlackChannelOptions> = {}) {
  channel = new SlackChannel({
    token: TOKEN,
    signingSecret: slack.signingSecret,
    listen: false,
    logLevel: LogLevel.ERROR,
    clientOptions: { slackApiUrl, retryConfig: { retries: 0 } },
    ...options,
  });
  return channel;
}

describe('Slack errors never carry the bot token', () => {
  it('when the Web API error holds the request and its Authorization header', () => {
    // given a request error shaped like @slack/web-api's (v7: the axios error as `original`)
    const axiosError = Object.assign(
      new Error(`connect ECONNREFUSED (POST https://slack.com/api/auth.test?token=${TOKEN})`),
      {
        code: 'ECONNREFUSED',
        config: {
          url: 'https://slack.com/api/chat.postMessage',
          headers: { Authorization: `Bearer ${TOKEN}` },
          data: `token=${TOKEN}&channel=C0GENERAL`,
        },
        request: {
          _header: `POST /api/chat.postMessage HTTP/1.1\r\nAuthorization: Bearer ${TOKEN}`,
        },
      },
    );
    const webApiError = Object.assign(
      new Error(`A request error occurred: ${axiosError.message}`),
      { code: 'slack_webapi_request_error', original: axiosError },
    );

    // when it is wrapped
    const error = toColloquyError(webApiError, { method: 'chat.postMessage' });

    // then nothing of the request survives, and the reason does
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toContain('ECONNREFUSED');
    expectNoSecret(error, SECRET);
    expectRedactedCauses(error);
    expect(error.cause).toMatchObject({ code: 'slack_webapi_request_error' });
  });
});

describe('Slack broadcast mentions in replies', () => {
  const pings = '<!channel> <!here> <!everyone> <!subteam^S0ONCALL|@oncall> <!here|@here>';

  it('escapes @channel, @here, @everyone and user groups by default', async () => {
    await channelFor(slack.slackApiUrl).start(handlers);

    await channel!.send({ ...outbound, content: `${pings} — ask <@U0ALICE>` });

    const [post] = await slack.waitForPosted(1);
    expect(post?.text).toBe(
      '&lt;!channel&gt; &lt;!here&gt; &lt;!everyone&gt; &lt;!subteam^S0ONCALL|@oncall&gt; ' +
        '&lt;!here|@here&gt; — ask <@U0ALICE>',
    );
  });

  it('escapes a broadcast smuggled in through a Markdown link label', () => {
    expect(formatSlackText('[see ><!here](https://example.com)')).toEqual([
      '<https://example.com|see &gt;&lt;!here>',
    ]);
  });

  it('keeps user mentions, channel links, dates and links', () => {
    const text = '<@U0ALICE> in <#C0GENERAL> on <!date^1392734382^{date}|Feb 18> <https://x.io|x>';
    expect(formatSlackText(text)).toEqual([text]);
  });

  it('keeps broadcast mentions when allowBroadcastMentions is set', () => {
    expect(formatSlackText(pings, undefined, { allowBroadcastMentions: true })).toEqual([pings]);
  });

  it('posts broadcast mentions as mentions when the channel allows them', async () => {
    await channelFor(slack.slackApiUrl, { allowBroadcastMentions: true }).start(handlers);

    await channel!.send({ ...outbound, content: 'heads up <!here>' });

    const [post] = await slack.waitForPosted(1);
    expect(post?.text).toBe('heads up <!here>');
  });
});
