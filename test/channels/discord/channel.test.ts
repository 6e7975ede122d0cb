import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  MalformedEventError,
  NetworkError,
  PlatformError,
  type ChannelHandlers,
  type ColloquyError,
  type MessageDeletion,
  type MessageEdit,
  type NewMessage,
} from 'colloquy';
import { Client, GatewayIntentBits, Partials } from 'discord.js';
import { DiscordChannel } from 'colloquy/discord';
import { FakeDiscord, type FakeDiscordUser } from 'colloquy/testing';

const GUILD = '81384788765712384';
const GENERAL = '290926798999357250';
const THREAD = '1202600000000000001';
const DM = '1202570000000000001';
const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };

/** ChannelHandlers that record what the channel reports, with a way to await it. */
function recorder() {
  const seen = {
    messages: [] as NewMessage[],
    edits: [] as MessageEdit[],
    deletions: [] as MessageDeletion[],
    errors: [] as ColloquyError[],
  };
  const waiters = new Set<() => void>();
  const changed = () => waiters.forEach((check) => check());
  const handlers: ChannelHandlers = {
    message: async (message) => (
      seen.messages.push(message),
      changed(),
      { handled: Promise.resolve() }
    ),
    edit: async (edit) => (seen.edits.push(edit), changed(), { handled: Promise.resolve() }),
    delete: async (deletion) => (
      seen.deletions.push(deletion),
      changed(),
      { handled: Promise.resolve() }
    ),
    capacity: async () => {},
    error: (error) => void (seen.errors.push(error), changed()),
  };
  const until = (condition: (s: typeof seen) => boolean): Promise<typeof seen> =>
    new Promise((resolve) => {
      const check = () => {
        if (!condition(seen)) return;
        waiters.delete(check);
        resolve(seen);
      };
      waiters.add(check);
      check();
    });
  return { handlers, seen, until };
}

describe('DiscordChannel against FakeDiscord', () => {
  let discord: FakeDiscord;
  let channel: DiscordChannel;
  let events: ReturnType<typeof recorder>;

  beforeEach(async () => {
    discord = await FakeDiscord.start();
    discord.addGuild({
      id: GUILD,
      name: 'Test Guild',
      channels: [{ id: GENERAL, name: 'general' }],
    });
    discord.addThread({ id: THREAD, guildId: GUILD, parentId: GENERAL, name: 'deploys' });
    discord.addDmChannel({ id: DM, recipient: alice });
    channel = new DiscordChannel({
      token: discord.token,
      clientOptions: { rest: { api: discord.restApi } },
    });
    events = recorder();
    await channel.start(events.handlers);
  });

  afterEach(async () => {
    await channel.stop();
    await discord.close();
  });

  it('learns its identity from READY and identifies with the default intents', () => {
    expect(channel.botIdentity).toEqual({
      id: 'discord:1100000000000000001',
      username: 'colloquy-bot',
      displayName: 'colloquy-bot',
    });
    // Guilds | GuildMessages | DirectMessages | MessageContent
    expect(discord.identifies[0]?.intents).toBe(1 | 512 | 1024 | 4096 | 8192 | 32768);
  });

  it('reports a guild message, a thread message and a DM with their scopes', async () => {
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'hello', nick: 'Ally' });
    discord.userMessage({ channelId: THREAD, author: alice, content: 'in the thread' });
    discord.userMessage({ channelId: DM, author: alice, content: 'just us' });
    const { messages } = await events.until((s) => s.messages.length === 3);
    expect(messages.map((m) => [m.conversationId, m.scope, m.participant.displayName])).toEqual([
      [`discord:${GUILD}:${GENERAL}`, 'channel', 'Ally'],
      [`discord:${GUILD}:${GENERAL}:${THREAD}`, 'thread', 'Alice'],
      [`discord:dm:${DM}`, 'dm', 'Alice'],
    ]);
    expect(messages[1]?.metadata).toMatchObject({
      channelId: GENERAL,
      channelName: 'general',
      threadId: THREAD,
      threadName: 'deploys',
    });
  });

  it('posts a reply, ignores its own echo, and reports edits and deletions', async () => {
    const inbound = discord.userMessage({ channelId: GENERAL, author: alice, content: 'hi' });
    await events.until((s) => s.messages.length === 1);
    const sent = await channel.send({
      conversationId: `discord:${GUILD}:${GENERAL}`,
      scope: 'channel',
      channelId: GENERAL,
      replyToMessageId: inbound.id,
      content: 'hello Alice',
    });
    expect(sent.messageIds).toEqual([discord.posted[0]?.id]);
    expect(discord.posted[0]).toMatchObject({
      type: 19,
      message_reference: { message_id: inbound.id },
    });

    discord.editMessage({ messageId: inbound.id, content: 'hi there' });
    discord.deleteMessage({ messageId: inbound.id });
    const seen = await events.until((s) => s.deletions.length === 1);
    expect(seen.edits).toMatchObject([
      { channelId: GENERAL, messageId: inbound.id, content: 'hi there' },
    ]);
    expect(seen.deletions).toMatchObject([{ channelId: GENERAL, messageId: inbound.id }]);
    expect(seen.messages).toHaveLength(1); // the echo of our reply was not reported
  });

  it('hands a message replayed after a RESUME over again, with the same turn id', async () => {
    let deliveries = 0;
    channel.client.on('raw', (packet: { t?: string; d?: { content?: string } }) => {
      if (packet.t === 'MESSAGE_CREATE' && packet.d?.content === 'once') deliveries++;
    });
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'once' });
    await events.until((s) => s.messages.length === 1);
    await discord.forceReconnect({ replayLast: 1 });
    discord.replayLastEvents(1);
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'after' });
    const { messages } = await events.until((s) => s.messages.length === 4);
    expect(discord.resumes).toBe(1);
    expect(deliveries).toBe(3); // sent, replayed on RESUME, sent again
    expect(messages.map((m) => m.content)).toEqual(['once', 'once', 'once', 'after']);
    expect(new Set(messages.slice(0, 3).map((m) => m.id)).size).toBe(1);
  });

  it("asks the REST API for a thread's parent when the thread is not cached", async () => {
    channel.client.channels.cache.delete(THREAD);
    discord.userMessage({ channelId: THREAD, author: alice, content: 'uncached' });
    const { messages } = await events.until((s) => s.messages.length === 1);
    expect(messages[0]?.conversationId).toBe(`discord:${GUILD}:${GENERAL}:${THREAD}`);
    expect(discord.requests).toContainEqual(
      expect.objectContaining({ method: 'GET', path: `/api/v10/channels/${THREAD}`, status: 200 }),
    );
  });

  it('warns once when messages arrive without content (no Message Content intent)', async () => {
    discord.userMessage({ channelId: GENERAL, author: alice, content: '' });
    discord.userMessage({ channelId: GENERAL, author: alice, content: '' });
    const seen = await events.until((s) => s.messages.length === 2);
    expect(seen.errors).toHaveLength(1);
    expect(seen.errors[0]).toMatchObject({
      name: 'PlatformError',
      code: 'missing_message_content',
    });
  });

  it('reports a malformed event and keeps going', async () => {
    discord.dispatch('MESSAGE_CREATE', {
      id: 'not-a-snowflake',
      channel_id: GENERAL,
      content: 'x',
    });
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'still here' });
    const seen = await events.until((s) => s.messages.length === 1 && s.errors.length === 1);
    expect(seen.errors[0]).toBeInstanceOf(MalformedEventError);
    expect(seen.messages[0]?.content).toBe('still here');
  });

  it('waits out a 429 and then posts', async () => {
    discord.failNext({ status: 429, retryAfter: 0.05 });
    const sent = await channel.send({
      conversationId: `discord:dm:${DM}`,
      scope: 'dm',
      channelId: DM,
      content: 'eventually',
    });
    expect(sent.messageIds).toHaveLength(1);
    expect(discord.requests.filter((r) => r.method === 'POST').map((r) => r.status)).toEqual([
      429, 200,
    ]);
  });

  it('turns Missing Permissions and Unknown Channel into PlatformErrors with the Discord code', async () => {
    discord.failNext({ status: 403, code: 50013, message: 'Missing Permissions' });
    const send = (channelId: string) =>
      channel.send({ conversationId: 'c', scope: 'channel', channelId, content: 'x' });
    await expect(send(GENERAL)).rejects.toMatchObject({
      name: 'PlatformError',
      platform: 'discord',
      code: '50013',
    });
    const unknown = await send('999999999999999999').catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(PlatformError);
    expect(unknown).toMatchObject({ code: '10003', conversationId: 'c' });
  });

  it('reports the parts that went out to partPosted when a later part is refused', async () => {
    // given a reply of two parts, and Discord refusing the second
    const firstPosted = discord
      .waitForPosted(1)
      .then(() => discord.failNext({ status: 403, code: 50013, message: 'Missing Permissions' }));
    const told: (readonly string[])[] = [];
    const send = channel.send(
      {
        conversationId: `discord:${GUILD}:${GENERAL}`,
        scope: 'channel',
        channelId: GENERAL,
        content: 'a'.repeat(1500) + '\n\n' + 'b'.repeat(1500),
      },
      { partPosted: async (ids) => void told.push(ids) },
    );

    // when the send fails
    const error = await send.catch((e: unknown) => e);
    await firstPosted;

    // then the part that did get through was reported before the error
    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({ code: '50013' });
    expect(told).toEqual([[discord.posted[0]?.id]]);
    expect(discord.posted).toHaveLength(1);
  });
});

describe('DiscordChannel with a client of your own', () => {
  it('logs it in, uses it, and leaves it running on stop', async () => {
    const discord = await FakeDiscord.start();
    const client = new Client({
      intents: [GatewayIntentBits.Guilds, GatewayIntentBits.DirectMessages],
      partials: [Partials.Channel],
      rest: { api: discord.restApi },
    });
    const channel = new DiscordChannel({ token: discord.token, client });
    await channel.start(recorder().handlers);
    expect(channel.client).toBe(client);
    expect(discord.identifies[0]?.intents).toBe(1 | 4096);
    await channel.stop();
    expect(client.isReady()).toBe(true);
    await client.destroy();
    await discord.close();
  });
});

describe('DiscordChannel failures', () => {
  it('reports an unreachable API as a NetworkError', async () => {
    const discord = await FakeDiscord.start();
    const restApi = discord.restApi;
    await discord.close();
    const channel = new DiscordChannel({
      token: 'fake-discord-token',
      clientOptions: { rest: { api: restApi, retries: 0 } },
    });
    await expect(channel.start(recorder().handlers)).rejects.toBeInstanceOf(NetworkError);
  });

  it('reports a refused token as a PlatformError', async () => {
    const discord = await FakeDiscord.start();
    const channel = new DiscordChannel({
      token: 'wrong-token',
      clientOptions: { rest: { api: discord.restApi } },
    });
    await expect(channel.start(recorder().handlers)).rejects.toMatchObject({
      name: 'PlatformError',
      code: 'TokenInvalid',
    });
    await discord.close();
  });
});

describe('DiscordChannel on a bot of several shards', () => {
  it('runs every shard alone, each guild’s messages and the DMs arriving on theirs', async () => {
    // given a bot of two shards with a guild on each, and a DM
    const discord = await FakeDiscord.start({ shards: 2 });
    const otherGuild = '81384788769906688';
    discord.addGuild({ id: GUILD, name: 'Zero', channels: [{ id: GENERAL, name: 'general' }] });
    discord.addGuild({
      id: otherGuild,
      name: 'One',
      channels: [{ id: '290926798999357251', name: 'help' }],
    });
    discord.addDmChannel({ id: DM, recipient: alice });
    expect([discord.shardOf(GUILD), discord.shardOf(otherGuild)]).toEqual([0, 1]);
    const channel = new DiscordChannel({
      token: discord.token,
      clientOptions: { rest: { api: discord.restApi } },
      shardCount: 2,
    });
    const events = recorder();
    try {
      await channel.start(events.handlers);

      // when someone writes in each guild and in the DM
      discord.userMessage({ channelId: GENERAL, author: alice, content: 'on zero' });
      discord.userMessage({ channelId: '290926798999357251', author: alice, content: 'on one' });
      discord.userMessage({ channelId: DM, author: alice, content: 'in the DM' });

      // then the channel identified once per shard and handed over all three
      const seen = await events.until((s) => s.messages.length === 3);
      expect(discord.identifies.map((identify) => identify.shard).sort()).toEqual([
        [0, 2],
        [1, 2],
      ]);
      expect(seen.messages.map((m) => m.content).sort()).toEqual([
        'in the DM',
        'on one',
        'on zero',
      ]);
      expect(seen.messages.find((m) => m.content === 'on one')?.metadata.channelName).toBe('help');
      expect(seen.errors).toEqual([]);
    } finally {
      await channel.stop();
      await discord.close();
    }
  });
});
