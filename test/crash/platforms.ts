import type { Message, Update } from 'grammy/types';
import type {
  FakeDiscord,
  FakeDiscordUser,
  FakeSlack,
  FakeTelegram,
  SteadyTraffic,
} from 'colloquy/testing';
import type { PlatformRecord } from './harness.js';

const people = [1001, 1002, 1003].map((id) => ({ id, is_bot: false, first_name: `User ${id}` }));

/**
 * Telegram traffic: two DMs (always addressed) and three groups where every other message
 * mentions the bot, five conversations in all — times `sets`, for a load spread over more
 * chats. Each conversation is answered in order, so a conversation's own rate (`rate / (5 *
 * sets)`) must stay within what one run after another does.
 */
export function telegramTraffic(telegram: FakeTelegram, rate: number, sets = 1): SteadyTraffic {
  const mention = `@${telegram.botInfo.username}`;
  return telegram.traffic(rate, (i) => {
    const set = Math.floor(i / 5) % sets;
    const slot = i % 5;
    const from = people[i % 3] as (typeof people)[number];
    if (slot < 2) {
      const id = 1001 + slot + 10 * set;
      const chat = { id, type: 'private' as const, first_name: `User ${id}` };
      return { chat, from: { ...from, id }, text: `q${i} order?` };
    }
    const chat = {
      id: -2001 - (slot - 2) - 10 * set,
      type: 'group' as const,
      title: `G${slot}:${set}`,
    };
    const round = Math.floor(i / (5 * sets));
    const text = round % 2 === 0 ? `${mention} q${i} refund?` : `q${i} hi`;
    return { chat, from, text };
  });
}

/** What FakeTelegram counts as acknowledged, and the replies it received (by `reply_parameters`). */
export function telegramRecord(telegram: FakeTelegram): PlatformRecord {
  const mention = `@${telegram.botInfo.username}`;
  return {
    acknowledged: telegram.acknowledged.flatMap((update: Update) => {
      const message = update.message;
      if (message === undefined) return [];
      return [
        {
          key: `${message.chat.id}:${message.message_id}`,
          addressed: message.chat.type === 'private' || (message.text ?? '').includes(mention),
        },
      ];
    }),
    replies: telegram.sent
      .filter((sent) => sent.method === 'sendMessage')
      .map((sent) => {
        const replyTo = (sent.payload.reply_parameters as { message_id?: number } | undefined)
          ?.message_id;
        return {
          key: `${sent.chatId}:${(sent.message as Message).message_id}`,
          answers: replyTo === undefined ? undefined : `${sent.chatId}:${replyTo}`,
          text: sent.text,
        };
      }),
  };
}

/** Slack traffic over four channels; every other post mentions the bot (`message` + `app_mention`). */
export function slackTraffic(slack: FakeSlack, rate: number): SteadyTraffic {
  return slack.traffic(rate, (i) => ({
    channel: ['C0GENERAL', 'C0ORDERS', 'C0HELP', 'C0SHOP'][i % 4] as string,
    user: i % 3 === 0 ? 'U0ALICE' : 'U0BOB',
    text: `q${i} where is my order?`,
    mention: Math.floor(i / 4) % 2 === 0,
  }));
}

/**
 * What FakeSlack counts as acknowledged, and the replies it received. Slack replies carry no
 * reference to the post they answer: the fake model echoes the post's `q<n>` token.
 */
export function slackRecord(slack: FakeSlack): PlatformRecord {
  const mention = `<@${slack.bot.userId}>`;
  const posts = new Map<string, string>(); // token → key of the post that carried it
  const acknowledged = slack.acknowledged.flatMap(({ event }) => {
    const key = `${String(event.channel)}:${String(event.ts)}`;
    const token = /\bq\d+\b/.exec(String(event.text))?.[0];
    if (token !== undefined) posts.set(token, key);
    return [{ key, addressed: String(event.text).includes(mention) }];
  });
  return {
    acknowledged,
    replies: slack.posted.map((post) => {
      const token = /\bq\d+\b/.exec(post.text)?.[0];
      return {
        key: `${post.channel}:${post.ts}`,
        answers: token === undefined ? undefined : posts.get(token),
        text: post.text,
      };
    }),
  };
}

const DISCORD_CHANNELS = ['290926798999357250', '290926798999357251', '290926798999357252'];
const DISCORD_PEOPLE: FakeDiscordUser[] = ['alice', 'bob'].map((username, i) => ({
  id: `8035111022467891${i}`,
  username,
}));
const DISCORD_DMS = DISCORD_PEOPLE.map((_, i) => `120257000000000000${i}`);

/**
 * Discord's scene: a guild with two channels and one with a third (on shard 1 when the bot
 * runs two), and two people each with a DM to the bot.
 */
export function discordScene(discord: FakeDiscord): void {
  discord.addGuild({
    id: '81384788765712384',
    name: 'Shop',
    channels: DISCORD_CHANNELS.slice(0, 2).map((id, i) => ({ id, name: `room-${i}` })),
  });
  discord.addGuild({
    id: '81384788769906688',
    name: 'Help desk',
    channels: [{ id: DISCORD_CHANNELS[2]!, name: 'room-2' }],
  });
  DISCORD_PEOPLE.forEach((recipient, i) =>
    discord.addDmChannel({ id: DISCORD_DMS[i]!, recipient }),
  );
}

/** Discord traffic in `discordScene`: two DMs (always addressed), three channels where every other post mentions the bot. */
export function discordTraffic(discord: FakeDiscord, rate: number): SteadyTraffic {
  const bot = discord.botUser;
  return discord.traffic(rate, (i) => {
    const author = DISCORD_PEOPLE[i % 2]!;
    if (i % 5 < 2) return { channelId: DISCORD_DMS[i % 5]!, author, content: `q${i} order?` };
    const mention = Math.floor(i / 5) % 2 === 0;
    return {
      channelId: DISCORD_CHANNELS[(i % 5) - 2]!,
      author,
      content: mention ? `<@${bot.id}> q${i} refund?` : `q${i} hi`,
      ...(mention && { mentions: [bot] }),
    };
  });
}

/** What FakeDiscord delivered (replays counted once) and the replies it received. */
export function discordRecord(discord: FakeDiscord): PlatformRecord {
  const bot = discord.botUser;
  const delivered = new Map<string, boolean>(); // key → addressed
  for (const event of discord.delivered) {
    if (event.t !== 'MESSAGE_CREATE') continue;
    const message = event.d as { id: string; channel_id: string; author: { id: string } };
    if (message.author.id === bot.id) continue; // the echo of a reply
    const text = (event.d as { content: string }).content;
    const dm = DISCORD_DMS.includes(message.channel_id);
    delivered.set(`${message.channel_id}:${message.id}`, dm || text.includes(`<@${bot.id}>`));
  }
  return {
    acknowledged: [...delivered].map(([key, addressed]) => ({ key, addressed })),
    replies: discord.posted.map((post) => ({
      key: `${post.channel_id}:${post.id}`,
      text: post.content,
      answers:
        post.message_reference === undefined
          ? undefined
          : `${post.message_reference.channel_id}:${post.message_reference.message_id}`,
    })),
  };
}
