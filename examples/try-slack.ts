/**
 * `npx colloquy try slack`: a fake Slack (FakeSlack from colloquy/testing) and the example
 * Slack bot receiving its events over HTTP. The person writes in a DM, or in #general where
 * the bot answers a mention in a thread of it, and every follow-up in that thread.
 */
import { createServer } from 'node:net';
import { FakeSlack, type FakeSlackPost } from 'colloquy/testing';
import { named, short, type FakePlatform } from './try-session.js';

const BOT = 'colloquy';
const PERSON = 'U0TRYPERSON';
const places = { dm: 'D0TRYDM', '#general': 'C0GENERAL' } as const;

export async function fakeSlack(name: string): Promise<FakePlatform> {
  const slack = await FakeSlack.start({
    bot: { name: BOT },
    users: { [PERSON]: name },
    channels: { C0GENERAL: 'general' },
  });
  const port = await freePort();
  slack.eventsUrl = `http://127.0.0.1:${port}/slack/events`;
  const tagOf = (channel: string) => (channel === places.dm ? 'dm' : '#general');
  /** Who wrote the message at `ts` of `channel`, and what. */
  const message = (channel: string, ts: string) => {
    const post = slack.posted.find((sent) => sent.channel === channel && sent.ts === ts);
    if (post !== undefined) return { user: slack.bot.userId, text: post.text };
    return slack.written.find((written) => written.channel === channel && written.ts === ts);
  };
  const describe = (post: FakeSlackPost) => {
    const parent = post.thread_ts === undefined ? undefined : message(post.channel, post.thread_ts);
    const thread =
      parent === undefined
        ? ''
        : ` ↳ in the thread of "${short(named(parent.text, slack.bot.userId, BOT))}"`;
    return `[${tagOf(post.channel)}] @${BOT}${thread}: ${named(post.text, slack.bot.userId, BOT)}`;
  };
  return {
    bot: `@${BOT}`,
    example: 'slack-bot.js',
    env: {
      SLACK_BOT_TOKEN: slack.token,
      SLACK_SIGNING_SECRET: slack.signingSecret,
      SLACK_API_URL: slack.slackApiUrl,
      SLACK_APP_TOKEN: '',
      PORT: String(port),
    },
    ready: /receives events at/,
    about: `a fake Slack on ${slack.url}`,
    places: [
      {
        command: '/channel',
        tag: '#general',
        entered: 'now in the channel #general',
        help: `write in #general (it answers @${BOT} … in a thread, then the whole thread)`,
      },
    ],
    write(tag, text, reply) {
      const channel = tag === 'dm' ? places.dm : places['#general'];
      const last = reply ? slack.posted.findLast((post) => post.channel === channel) : undefined;
      if (reply && last === undefined) return `nothing from @${BOT} here to reply to yet`;
      const threadTs = last === undefined ? undefined : (last.thread_ts ?? last.ts);
      const mention = new RegExp(`@${BOT}\\b`, 'g');
      const input = {
        channel,
        user: PERSON,
        text: text.replace(mention, `<@${slack.bot.userId}>`),
        ...(threadTs !== undefined && {
          thread_ts: threadTs,
          parent_user_id: message(channel, threadTs)?.user ?? PERSON,
        }),
      };
      const sent =
        channel !== places.dm && input.text !== text ? slack.mention(input) : slack.message(input);
      void sent.catch((error: unknown) =>
        console.error(`the fake Slack could not deliver: ${String(error)}`),
      );
      return undefined;
    },
    shown: () => slack.posted.map(describe),
    more: (count) => slack.waitFor(() => slack.posted.length > count, 2 ** 31 - 1),
    close: () => slack.close(),
  };
}

/** A port nothing listens on now, for the bot's HTTP events. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
