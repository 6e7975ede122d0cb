/**
 * `npx colloquy try discord`: a fake Discord (FakeDiscord from colloquy/testing: REST and the
 * gateway) and the example Discord bot pointed at it through DISCORD_API_URL. The person
 * writes in a DM, or on a server in #general or a thread of it, where the bot answers when
 * mentioned or replied to.
 */
import { FakeDiscord, type FakeDiscordRequest } from 'colloquy/testing';
import { named, short, type FakePlatform } from './try-session.js';

const BOT = 'colloquy';
const SERVER = { id: '1300000000000000001', name: 'colloquy try' };
const channels = {
  dm: '1300000000000000002',
  '#general': '1300000000000000003',
  '#general › questions': '1300000000000000004',
} as const;
type Tag = keyof typeof channels;
/** A message the bot posts or edits: `…/channels/<channel>/messages[/<message>]`. */
const MESSAGE = /\/channels\/(\d+)\/messages(?:\/(\d+))?$/;

export async function fakeDiscord(name: string): Promise<FakePlatform> {
  const discord = await FakeDiscord.start({ bot: { id: '1100000000000000001', username: BOT } });
  const person = { id: '1200000000000000001', username: name.toLowerCase(), global_name: name };
  discord.addGuild({ ...SERVER, channels: [{ id: channels['#general'], name: 'general' }] });
  discord.addThread({
    id: channels['#general › questions'],
    guildId: SERVER.id,
    parentId: channels['#general'],
    name: 'questions',
  });
  discord.addDmChannel({ id: channels.dm, recipient: person });
  /** The text of every message, by id, to quote what a reply answers. */
  const texts = new Map<string, string>();
  const tagOf = (channel: string) =>
    (Object.keys(channels) as Tag[]).find((tag) => channels[tag] === channel) ?? channel;
  const isPost = (request: FakeDiscordRequest) =>
    request.status === 200 &&
    (request.method === 'POST' || request.method === 'PATCH') &&
    MESSAGE.test(request.path);
  const describe = (request: FakeDiscordRequest) => {
    const [, channel = ''] = MESSAGE.exec(request.path) ?? [];
    const body = request.body as { content?: string; message_reference?: { message_id: string } };
    const quoted = texts.get(body.message_reference?.message_id ?? '');
    const thread = quoted === undefined ? '' : ` ↳ replying to "${short(quoted)}"`;
    const edited = request.method === 'PATCH' ? ' (edited)' : '';
    const content = named(body.content ?? '', discord.botUser.id, BOT);
    return `[${tagOf(channel)}] @${BOT}${edited}${thread}: ${content}`;
  };
  return {
    bot: `@${BOT}`,
    example: 'discord-bot.js',
    env: { DISCORD_BOT_TOKEN: discord.token, DISCORD_API_URL: discord.restApi },
    ready: /is connected to Discord/,
    about: `a fake Discord on ${discord.restApi}`,
    places: [
      {
        command: '/server',
        tag: '#general',
        entered: `now in #general on the server "${SERVER.name}"`,
        help: `write in a server's #general (it answers when mentioned: @${BOT} …, or replied to)`,
      },
      {
        command: '/thread',
        tag: '#general › questions',
        entered: 'now in the thread "questions" of #general',
        help: 'write in a thread of #general (the same: mentions and replies)',
      },
    ],
    write(tag, text, reply) {
      const channelId = channels[tag as Tag];
      const to = reply
        ? discord.posted.findLast((post) => post.channel_id === channelId)
        : undefined;
      if (reply && to === undefined) return `nothing from @${BOT} here to reply to yet`;
      const mention = new RegExp(`@${BOT}\\b`, 'g');
      const content = text.replace(mention, `<@${discord.botUser.id}>`);
      const message = discord.userMessage({
        channelId,
        author: person,
        content,
        ...(content !== text && { mentions: [discord.botUser] }),
        ...(to !== undefined && { referencedMessage: to.id }),
      });
      texts.set(message.id, text);
      return undefined;
    },
    shown: () => discord.requests.filter(isPost).map(describe),
    more: (count) => discord.waitForRequest(isPost, count + 1, 2 ** 31 - 1),
    close: () => discord.close(),
  };
}
