import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot } from 'colloquy';
import { FakeDiscord, type FakeDiscordUser } from 'colloquy/testing';
import { GatedAgent } from '../../fixtures/gated-agent.js';
import { addGeneral, GENERAL, GUILD, startDiscordBot } from './discord.fixtures.js';

const THREAD = '1202600000000000001';
const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };

describe('typing on Discord (discord.js against FakeDiscord)', () => {
  let discord: FakeDiscord;
  let agent: GatedAgent;
  let bot: Bot;

  beforeEach(async () => {
    discord = await FakeDiscord.start();
    addGeneral(discord);
    discord.addThread({ id: THREAD, guildId: GUILD, parentId: GENERAL, name: 'deploys' });
    agent = new GatedAgent('On it.');
    ({ bot } = await startDiscordBot(discord, { agents: [agent] }));
  });

  afterEach(async () => {
    agent.release();
    await bot.stop();
    await discord.close();
  });

  const typingIn = (channelId: string) => (request: { method: string; path: string }) =>
    request.method === 'POST' && request.path === `/api/v10/channels/${channelId}/typing`;

  it('triggers the typing indicator in the channel while the agent works, then replies', async () => {
    discord.userMessage({
      channelId: GENERAL,
      author: alice,
      content: `<@${discord.botUser.id}> where is my order?`,
      mentions: [discord.botUser],
    });
    await agent.started;
    const [typing] = await discord.waitForRequest(typingIn(GENERAL));
    expect(typing?.status).toBe(204);
    agent.release();
    const [reply] = await discord.waitForPosted(1);
    expect(reply?.content).toBe('On it.');
  });

  it('types in the thread a reply goes to', async () => {
    discord.userMessage({
      channelId: THREAD,
      author: alice,
      content: `<@${discord.botUser.id}> did it deploy?`,
      mentions: [discord.botUser],
    });
    await agent.started;
    const [typing] = await discord.waitForRequest(typingIn(THREAD));
    expect(typing?.status).toBe(204);
  });
});
