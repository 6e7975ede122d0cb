import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import { LogLevel } from '@slack/bolt';
import type { Chat, User } from 'grammy/types';
import { ConsoleChannel } from 'colloquy/console';
import { Client, Events, Partials, Routes } from 'discord.js';
import { DEFAULT_DISCORD_INTENTS, DiscordChannel, DISCORD_MESSAGE_LIMIT } from 'colloquy/discord';
import { SLACK_TEXT_LIMIT, SlackChannel } from 'colloquy/slack';
import { TELEGRAM_MESSAGE_LIMIT, TelegramChannel } from 'colloquy/telegram';
import { FakeDiscord, FakeSlack, FakeTelegram } from 'colloquy/testing';
import type { FakeDiscordUser } from 'colloquy/testing';
import { describeChannelContract } from '../contracts/channel-contract.js';
import type { ChannelHarness, FailingStart, Place, Posted } from '../contracts/channel-contract.js';

// ── Telegram: grammy long-polling FakeTelegram. Group and thread live in one forum supergroup.

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada', last_name: 'Lovelace' };
const forum: Chat = { id: -1009876543210, type: 'supergroup', title: 'Support', is_forum: true };
const adaDm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };
const TOPIC = 300;

async function telegramHarness(): Promise<ChannelHarness> {
  const telegram = await FakeTelegram.start();
  const channel = new TelegramChannel({
    token: telegram.token,
    client: { apiRoot: telegram.apiRoot },
    pollingTimeoutSeconds: 5,
    retry: { baseDelayMs: 5 },
  });
  const chatOf = (place: Place) => (place === 'dm' ? adaDm : forum);
  const topicOf = (place: Place) => (place === 'thread' ? TOPIC : undefined);
  let echoed = 0;
  return {
    channel,
    secret: telegram.token.split(':')[1]!,
    person: { id: 'telegram:1001', displayName: 'Ada Lovelace' },
    conversationIds: {
      group: `telegram:${forum.id}`,
      thread: `telegram:${forum.id}:${TOPIC}`,
      dm: `telegram:${adaDm.id}`,
    },
    messageLimit: TELEGRAM_MESSAGE_LIMIT,
    async write({ place, text, mentionBot, replyTo }) {
      const chat = chatOf(place);
      const replied = telegram.sent.find(
        (sent) =>
          replyTo !== undefined &&
          sent.chatId === chatOf(replyTo.place).id &&
          String(sent.message.message_id) === replyTo.platformId,
      );
      const { message } = telegram.sendUserMessage({
        chat,
        from: ada,
        text: mentionBot === true ? `@${telegram.botInfo.username} ${text}` : text,
        ...(topicOf(place) !== undefined && { message_thread_id: topicOf(place) }),
        ...(replied !== undefined && { reply_to_message: replied.message }),
      });
      return { place, text, platformId: String(message.message_id) };
    },
    async edit(written, text) {
      telegram.sendUserMessage({
        chat: chatOf(written.place),
        from: ada,
        text,
        editOf: Number(written.platformId),
        ...(topicOf(written.place) !== undefined && { message_thread_id: topicOf(written.place) }),
      });
    },
    async malformed() {
      telegram.pushUpdate({ message: { message_id: 99, date: 1, text: 'no chat' } });
    },
    failNextPost(failure) {
      // The channel retries a 500 three times, and does not wait 120 s for a 429.
      if (failure === 'server error') telegram.failNext('sendMessage', { error_code: 500 }, 4);
      else telegram.failNext('sendMessage', { error_code: 429, retry_after: 120 });
    },
    async deliverEchoes() {
      // Telegram does not send a bot its own messages; a channel must cope if one arrives.
      for (const sent of telegram.sent.slice(echoed))
        telegram.pushUpdate({ message: sent.message });
      echoed = telegram.sent.length;
    },
    posted: () =>
      telegram.sent
        .filter((sent) => sent.method === 'sendMessage')
        .map((sent) => ({
          text: sent.text,
          platformId: String(sent.message.message_id),
          place:
            sent.chatId === adaDm.id
              ? 'dm'
              : sent.chatId !== forum.id
                ? 'elsewhere'
                : sent.payload.message_thread_id === TOPIC
                  ? 'thread'
                  : sent.payload.message_thread_id === undefined
                    ? 'group'
                    : 'elsewhere',
        })),
    async close() {
      await channel.stop();
      await telegram.close();
    },
  };
}

/** A Telegram channel pointed at a fake that is gone, or that does not know its token. */
const telegramFailingStart = {
  async unreachable(): Promise<FailingStart> {
    const gone = await FakeTelegram.start();
    const { token, apiRoot } = gone;
    await gone.close();
    const channel = new TelegramChannel({ token, client: { apiRoot } });
    return { channel, secret: token.split(':')[1]!, close: () => channel.stop() };
  },
  async refused(): Promise<FailingStart> {
    const telegram = await FakeTelegram.start();
    const token = '987654:AAFakeButLongEnoughToLookLikeARealTok';
    const channel = new TelegramChannel({ token, client: { apiRoot: telegram.apiRoot } });
    return {
      channel,
      secret: token.split(':')[1]!,
      close: async () => {
        await channel.stop();
        await telegram.close();
      },
    };
  },
};

describeChannelContract('Telegram', {
  type: 'telegram',
  unsupported: { deletes: 'Telegram never tells a bot that a message was deleted' },
  open: telegramHarness,
  failingStart: telegramFailingStart,
});

// ── Slack: Bolt over signed HTTP events against FakeSlack (which echoes the bot's posts).

const GENERAL = 'C0GENERAL';
const ALICE_DM = 'D0ALICE';
const THREAD_TS = '1773226800.000100';

async function slackHarness(mount: 'own server' | 'requestListener'): Promise<ChannelHarness> {
  const slack = await FakeSlack.start({
    channels: { [GENERAL]: 'general' },
    echoBotMessages: true,
  });
  const own = mount === 'own server';
  const channel = new SlackChannel({
    token: slack.token,
    signingSecret: slack.signingSecret,
    ...(own ? { port: 0, host: '127.0.0.1' } : { listen: false }),
    // Answer each event once it is handled, so a finished delivery means a handled one.
    logLevel: LogLevel.ERROR,
    clientOptions: {
      slackApiUrl: slack.slackApiUrl,
      retryConfig: { retries: 1, minTimeout: 10, maxTimeout: 20 },
    },
  });
  // The app's own server: it keeps running after the channel stops.
  const server = own ? undefined : createServer((req, res) => channel.requestListener(req, res));
  const channelOf = (place: Place) => (place === 'dm' ? ALICE_DM : GENERAL);
  const threadOf = (place: Place) => (place === 'thread' ? THREAD_TS : undefined);
  return {
    channel,
    secret: slack.token,
    person: { id: 'slack:U0ALICE', displayName: 'Alice' },
    conversationIds: {
      group: `slack:${slack.teamId}:${GENERAL}`,
      thread: `slack:${slack.teamId}:${GENERAL}:${THREAD_TS}`,
      dm: `slack:${slack.teamId}:${ALICE_DM}`,
    },
    messageLimit: SLACK_TEXT_LIMIT,
    async afterStart() {
      if (server === undefined) {
        slack.eventsUrl = channel.eventsUrl;
        return;
      }
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      slack.eventsUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
    },
    async write({ place, text, mentionBot, replyTo }) {
      // Slack has no replies outside threads: answering a message means writing in its thread.
      const thread =
        replyTo !== undefined
          ? { thread_ts: replyTo.platformId, parent_user_id: slack.bot.userId }
          : threadOf(place) !== undefined
            ? { thread_ts: threadOf(place), parent_user_id: 'U0BOB' }
            : {};
      const input = { channel: channelOf(place), user: 'U0ALICE', text, ...thread };
      const { event } =
        mentionBot === true ? await slack.mention(input) : await slack.message(input);
      return { place, text, platformId: event.ts as string };
    },
    async edit(written, text) {
      const thread = threadOf(written.place);
      await slack.editMessage({
        channel: channelOf(written.place),
        user: 'U0ALICE',
        ts: written.platformId as string,
        text,
        previousText: written.text,
        ...(thread !== undefined && { thread_ts: thread }),
      });
    },
    async delete(written) {
      await slack.deleteMessage({
        channel: channelOf(written.place),
        ts: written.platformId as string,
        user: 'U0ALICE',
      });
    },
    async malformed() {
      await slack.sendEvent({ type: 'message', channel: GENERAL, text: 'no author, no ts' });
    },
    failNextPost(failure) {
      // The Web API client tries twice (`retries: 1`), waiting out `Retry-After: 0` in between.
      const answer = failure === 'server error' ? { status: 500 } : { status: 429, retryAfter: 0 };
      for (let attempt = 0; attempt < 2; attempt++) slack.failNext('chat.postMessage', answer);
    },
    deliverEchoes: () => slack.idle(),
    posted: () =>
      slack.posted.map((post): Posted => ({
        text: post.text,
        platformId: post.ts,
        place:
          post.channel === ALICE_DM && post.thread_ts === undefined
            ? 'dm'
            : post.channel !== GENERAL
              ? 'elsewhere'
              : post.thread_ts === undefined
                ? 'group'
                : post.thread_ts === THREAD_TS
                  ? 'thread'
                  : 'elsewhere',
      })),
    settle: () => slack.idle(),
    async close() {
      await channel.stop();
      await slack.close();
      if (server !== undefined) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  };
}

/** A Slack channel pointed at a fake that is gone, or that refuses its token. */
const slackFailingStart = {
  async unreachable(): Promise<FailingStart> {
    const gone = await FakeSlack.start();
    const { token, signingSecret, slackApiUrl } = gone;
    await gone.close();
    return slackStartingOn({ token, signingSecret, slackApiUrl }, async () => {});
  },
  async refused(): Promise<FailingStart> {
    const slack = await FakeSlack.start();
    slack.failNext('auth.test', { error: 'invalid_auth' });
    return slackStartingOn(slack, () => slack.close());
  },
};

function slackStartingOn(
  slack: Pick<FakeSlack, 'token' | 'signingSecret' | 'slackApiUrl'>,
  closeFake: () => Promise<void>,
): FailingStart {
  const channel = new SlackChannel({
    token: slack.token,
    signingSecret: slack.signingSecret,
    listen: false,
    logLevel: LogLevel.ERROR,
    clientOptions: { slackApiUrl: slack.slackApiUrl, retryConfig: { retries: 0 } },
  });
  return {
    channel,
    secret: slack.token,
    close: async () => {
      await channel.stop();
      await closeFake();
    },
  };
}

describeChannelContract('Slack (HTTP events, its own server)', {
  type: 'slack',
  open: () => slackHarness('own server'),
  failingStart: slackFailingStart,
});

describeChannelContract('Slack (HTTP events, mounted with requestListener)', {
  type: 'slack',
  open: () => slackHarness('requestListener'),
  failingStart: slackFailingStart,
});

// ── Discord: discord.js over FakeDiscord's REST and gateway (which echoes the bot's posts).

const GUILD = '81384788765712384';
const TEXT_CHANNEL = '290926798999357250';
const THREAD = '1202600000000000001';
const DM = '1202570000000000001';
const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };

async function discordHarness(client: 'its own' | 'yours'): Promise<ChannelHarness> {
  const discord = await FakeDiscord.start();
  discord.addGuild({
    id: GUILD,
    name: 'Test Guild',
    channels: [{ id: TEXT_CHANNEL, name: 'general' }],
  });
  discord.addThread({ id: THREAD, guildId: GUILD, parentId: TEXT_CHANNEL, name: 'deploys' });
  discord.addDmChannel({ id: DM, recipient: alice });
  // discord.js waits out every 429 unless told which routes to fail fast on instead.
  const rest = { api: discord.restApi, rejectOnRateLimit: ['/channels'] };
  // A client of your own stays connected after the channel stops: events keep reaching it.
  const yours =
    client === 'yours'
      ? new Client({
          intents: [...DEFAULT_DISCORD_INTENTS],
          partials: [Partials.Channel, Partials.Message],
          rest,
        })
      : undefined;
  const channel = new DiscordChannel({
    token: discord.token,
    ...(yours === undefined ? { clientOptions: { rest } } : { client: yours }),
  });
  /** Resolves once the client has received the message written last. */
  let received: Promise<void> = Promise.resolve();
  const channelOf = (place: Place) => ({ group: TEXT_CHANNEL, thread: THREAD, dm: DM })[place];
  const placeOf = (id: string): Posted['place'] =>
    id === TEXT_CHANNEL ? 'group' : id === THREAD ? 'thread' : id === DM ? 'dm' : 'elsewhere';
  return {
    channel,
    secret: discord.token,
    person: { id: `discord:${alice.id}`, displayName: 'Alice' },
    conversationIds: {
      group: `discord:${GUILD}:${TEXT_CHANNEL}`,
      thread: `discord:${GUILD}:${TEXT_CHANNEL}:${THREAD}`,
      dm: `discord:dm:${DM}`,
    },
    messageLimit: DISCORD_MESSAGE_LIMIT,
    async write({ place, text, mentionBot, replyTo }) {
      received = new Promise((resolve) => {
        const onRaw = (packet: { t?: string; d?: { content?: string } }) => {
          if (packet.t !== 'MESSAGE_CREATE' || packet.d?.content?.endsWith(text) !== true) return;
          channel.client.off(Events.Raw, onRaw);
          resolve();
        };
        channel.client.on(Events.Raw, onRaw);
      });
      const message = discord.userMessage({
        channelId: channelOf(place),
        author: alice,
        content: mentionBot === true ? `<@${discord.botUser.id}> ${text}` : text,
        ...(mentionBot === true && { mentions: [discord.botUser] }),
        ...(replyTo !== undefined && { referencedMessage: replyTo.platformId }),
      });
      return { place, text, platformId: message.id };
    },
    async edit(written, text) {
      discord.editMessage({ messageId: written.platformId as string, content: text });
    },
    async delete(written) {
      discord.deleteMessage({ messageId: written.platformId as string });
    },
    async malformed() {
      discord.dispatch('MESSAGE_CREATE', { id: 'not-a-snowflake', channel_id: TEXT_CHANNEL });
    },
    failNextPost(failure) {
      // discord.js retries a 500 three times; a 429 on /channels fails at once (rejectOnRateLimit).
      if (failure === 'rate limit') discord.failNext({ status: 429, retryAfter: 2 });
      else for (let attempt = 0; attempt < 4; attempt++) discord.failNext({ status: 500 });
    },
    // The gateway dispatches the echo before REST answers the post: nothing to wait for.
    deliverEchoes: async () => {},
    posted: () =>
      discord.posted.map((m) => ({
        text: m.content,
        platformId: m.id,
        place: placeOf(m.channel_id),
      })),
    // A destroyed client receives nothing; one that is still connected gets the message.
    settle: async () => {
      if (!channel.client.isReady()) return;
      await received;
      // The channel handles a gateway event asynchronously: a REST round trip started after
      // the event has arrived ends after that handling.
      await channel.client.rest.get(Routes.gatewayBot());
    },
    async close() {
      await channel.stop();
      await yours?.destroy();
      await discord.close();
    },
  };
}

/** A Discord channel pointed at a fake that is gone, or that does not know its token. */
const discordFailingStart = {
  async unreachable(): Promise<FailingStart> {
    const gone = await FakeDiscord.start();
    const { restApi, token } = gone;
    await gone.close();
    return discordStartingOn(restApi, token, async () => {});
  },
  async refused(): Promise<FailingStart> {
    const discord = await FakeDiscord.start();
    const token = `${discord.token}-not-this-one`;
    return discordStartingOn(discord.restApi, token, () => discord.close());
  },
};

function discordStartingOn(
  api: string,
  token: string,
  closeFake: () => Promise<void>,
): FailingStart {
  const channel = new DiscordChannel({ token, clientOptions: { rest: { api, retries: 0 } } });
  return {
    channel,
    secret: token,
    close: async () => {
      await channel.stop();
      await closeFake();
    },
  };
}

describeChannelContract('Discord (its own client)', {
  type: 'discord',
  open: () => discordHarness('its own'),
  failingStart: discordFailingStart,
});

describeChannelContract('Discord (a client of your own)', {
  type: 'discord',
  open: () => discordHarness('yours'),
  failingStart: discordFailingStart,
});

// ── Console: a DM on a pipe; one reply is one write.

async function consoleHarness(): Promise<ChannelHarness> {
  const input = new PassThrough();
  const writes: string[] = [];
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writes.push(chunk.toString('utf8'));
      done();
    },
  });
  const user = { kind: 'user' as const, id: 'console:ada', displayName: 'Ada' };
  const channel = new ConsoleChannel({ input, output, user, session: 'contract' });
  return {
    channel,
    person: { id: user.id, displayName: user.displayName },
    conversationIds: { dm: 'console:contract' },
    async write({ place, text }) {
      input.write(`${text}\n`);
      return { place, text };
    },
    posted: () => writes.map((text) => ({ place: 'dm', text: text.replace(/\n$/, '') })),
    async close() {
      await channel.stop();
      input.end();
    },
  };
}

const consoleHasNo = 'the console is one DM on a pipe';
describeChannelContract('console', {
  type: 'console',
  unsupported: {
    group: consoleHasNo,
    thread: consoleHasNo,
    mentions: consoleHasNo,
    replies: consoleHasNo,
    edits: 'lines cannot be edited once sent',
    deletes: 'lines cannot be deleted once sent',
    malformed: 'every line is a valid turn',
    echo: 'replies go to the output, never back to the input',
    split: 'a terminal has no length limit',
    failures: 'writing to a stream has no server errors or rate limits',
    credentials: 'the console has no token and no API to reach',
  },
  open: consoleHarness,
});
