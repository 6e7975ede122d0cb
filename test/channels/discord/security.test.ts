import { DiscordAPIError } from 'discord.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { DiscordChannel, toColloquyError } from 'colloquy/discord';
import { FakeDiscord } from 'colloquy/testing';
import { idleHandlers as handlers } from '../../contracts/channel-contract.js';
import { expectNoSecret, expectRedactedCauses } from '../../contracts/secrets.js';

const TOKEN = 'MTA5ODc2NTQzMjEwOTg3NjU0Mw.GxYzAb.abcdefghijklmnopqrstuvwxyz0123456789AB';
const SECRET = 'abcdefghijklmnopqrstuvwxyz0123456789AB';
const GUILD = '81384788765712384';
const GENERAL = '290926798999357250';
const outbound = {
  conversationId: `discord:${GUILD}:${GENERAL}`,
  scope: 'channel',
  channelId: GENERAL,
} as const;

let discord: FakeDiscord;
let channel: DiscordChannel | undefined;

beforeEach(async () => {
  discord = await FakeDiscord.start({ token: TOKEN });
  discord.addGuild({ id: GUILD, name: 'Test Guild', channels: [{ id: GENERAL, name: 'general' }] });
});

afterEach(async () => {
  await channel?.stop();
  channel = undefined;
  await discord.close();
});

function channelFor(api: string, token = TOKEN) {
  channel = new DiscordChannel({ token, clientOptions: { rest: { api, retries: 0 } } });
  return channel;
}

describe('Discord errors never carry the bot token', () => {
  it('when Discord refuses a message (Missing Permissions)', async () => {
    await channelFor(discord.restApi).start(handlers);
    discord.failNext({ status: 403, code: 50013, message: 'Missing Permissions' });

    const error = await channel!.send({ ...outbound, content: 'hi' }).catch((err: unknown) => err);

    expect(error).toMatchObject({ name: 'PlatformError', code: '50013' });
    expect((error as Error).message).toContain('Missing Permissions');
    expectNoSecret(error, SECRET);
    expectRedactedCauses(error);
  });

  it('when the failed request carried a token in its URL and body', () => {
    // given a DiscordAPIError from a webhook call: the webhook token is in the URL, and the
    // request body (echoed on the error as requestBody) holds a token too
    const webhookToken = 'x'.repeat(30) + 'WebhookSecret';
    const apiError = new DiscordAPIError(
      { code: 50027, message: 'Invalid Webhook Token' },
      50027,
      401,
      'POST',
      `https://discord.com/api/v10/webhooks/1100000000000000001/${webhookToken}`,
      { body: { content: 'hi', token: TOKEN } },
    );

    // when it is wrapped
    const error = toColloquyError(apiError, 'a webhook message');

    // then neither token survives
    expect(error).toMatchObject({ name: 'PlatformError', code: '50027' });
    expectNoSecret(error, SECRET);
    expectNoSecret(error, webhookToken);
    expectRedactedCauses(error);
  });
});
