import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BaseAgent, Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import { DiscordChannel } from 'colloquy/discord';
import { FakeDiscord, type FakeDiscordUser } from 'colloquy/testing';
import { pacedModel } from '../../fixtures/paced-model.js';

const GUILD = '81384788765712384';
const GENERAL = '290926798999357250';
const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };

class SupportAgent extends BaseAgent {
  name = 'support-agent';
  description = 'Answers questions in Discord';
  instructions = 'Be brief.';
  readonly paced = pacedModel();
  override model = this.paced.model;
}

describe('a reply streamed on Discord (discord.js against FakeDiscord)', () => {
  let discord: FakeDiscord;
  let agent: SupportAgent;
  let bot: Bot;

  beforeEach(async () => {
    discord = await FakeDiscord.start();
    discord.addGuild({ id: GUILD, name: 'Guild', channels: [{ id: GENERAL, name: 'general' }] });
    agent = new SupportAgent();
    const channel = new DiscordChannel({
      token: discord.token,
      clientOptions: { rest: { api: discord.restApi } },
    });
    bot = new Bot({
      channels: [channel],
      agents: [agent],
      store: new InMemoryConversationStore(),
      logger: silentLogger,
    });
    await bot.start();
  });

  afterEach(async () => {
    await bot.stop();
    await discord.close();
  });

  it('posts the first words as a reply, edits it with the rest, and records one reply', async () => {
    const asked = discord.userMessage({
      channelId: GENERAL,
      author: alice,
      content: `<@${discord.botUser.id}> deploy status?`,
      mentions: [discord.botUser],
    });
    await agent.paced.started;
    agent.paced.say('Deploy 812');
    const [posted] = await discord.waitForPosted(1);
    expect(posted).toMatchObject({
      content: 'Deploy 812',
      message_reference: { message_id: asked.id },
    });
    agent.paced.finish(' is live.');
    await discord.waitForRequest((request) => request.method === 'PATCH');
    await bot.idle();

    expect(discord.posted).toHaveLength(1);
    expect(discord.posted[0]?.content).toBe('Deploy 812 is live.');
    const replies = (await bot.store.get(`discord:${GUILD}:${GENERAL}`)).filter(
      (turn) => turn.participant.kind === 'agent',
    );
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({
      content: 'Deploy 812 is live.',
      delivery: 'sent',
      metadata: { messageId: posted?.id },
    });
  });
});
