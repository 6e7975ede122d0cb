import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiscordChannel } from 'colloquy/discord';
import { FakeDiscord } from 'colloquy/testing';
import { tempDirs } from '../../fixtures/temp-dirs.js';
import {
  leaveAsACrashBeforeConfirming,
  PostBots,
  scheduledPostSurvivesRestart,
} from '../posts.fixtures.js';
import { addGeneral, GENERAL, GUILD } from './discord.fixtures.js';

const temp = tempDirs();
const inGeneral = `discord:${GUILD}:${GENERAL}`;

describe('posts the bot starts on Discord (discord.js against FakeDiscord, SQLite file)', () => {
  let discord: FakeDiscord;
  let path: string;
  let bots: PostBots<DiscordChannel>;

  beforeEach(async () => {
    discord = await FakeDiscord.start();
    addGeneral(discord);
    path = join(temp.make('discord-posts'), 'bot.db');
    const channel = () =>
      new DiscordChannel({
        token: discord.token,
        clientOptions: { rest: { api: discord.restApi } },
      });
    bots = new PostBots(path, channel);
  });

  afterEach(async () => {
    await bots.stopAll();
    await discord.close();
  });

  const startBot = () => bots.start();

  it('posts into a guild channel with a nonce, recorded sent as a post', async () => {
    const { bot, store } = await startBot();
    const receipt = await bot.send(inGeneral, 'Release 2.4 is out.');
    expect(discord.posted).toMatchObject([{ channel_id: GENERAL, content: 'Release 2.4 is out.' }]);
    expect(await store.getMessage(inGeneral, receipt.id)).toMatchObject({
      delivery: 'sent',
      scope: 'channel',
      metadata: { origin: 'post', messageId: discord.posted[0]!.id },
    });
    expect(bots.errors).toEqual([]);
  });

  it('opens a DM with create DM and posts into it', async () => {
    const { bot, store } = await startBot();
    const dm = await bot.openDm('discord', '80351110224678912');
    expect(dm).toMatch(/^discord:dm:\d+$/);
    expect(await bot.openDm('discord', '80351110224678912')).toBe(dm);
    const receipt = await bot.send(dm, 'Your ticket was answered.');
    expect(discord.posted).toMatchObject([
      { channel_id: dm.slice('discord:dm:'.length), content: 'Your ticket was answered.' },
    ]);
    expect(await store.getMessage(dm, receipt.id)).toMatchObject({ scope: 'dm', delivery: 'sent' });
  });

  it('settles a post a crash left sending by its nonce, without posting it twice', async () => {
    const first = await startBot();
    const receipt = await first.bot.send(inGeneral, 'Maintenance at noon');
    await bots.stop(first);
    leaveAsACrashBeforeConfirming(path);

    const second = await startBot();
    await second.bot.idle();

    expect(discord.posted).toHaveLength(1);
    expect(await second.store.getMessage(inGeneral, receipt.id)).toMatchObject({
      delivery: 'sent',
      metadata: { messageId: discord.posted[0]!.id },
    });
    expect(bots.errors).toEqual([]);
  });

  it('sends a post that came due while the bot was stopped when a new bot starts', async () => {
    await scheduledPostSurvivesRestart(bots, inGeneral, () =>
      discord.posted.map((message) => ({ text: message.content, id: message.id })),
    );
  });
});
