import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BaseAgent, Bot, silentLogger } from 'colloquy';
import { DiscordChannel } from 'colloquy/discord';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeDiscord } from 'colloquy/testing';
import { answer } from '../../fixtures/model-answer.js';
import { deferred } from '../../src/bot/bot.fixtures.js';

const GUILD = '81384788765712384';
const GENERAL = '290926798999357250';

describe('a Bot on Discord stopping while it answers', () => {
  let discord: FakeDiscord;
  let dir: string;

  beforeEach(async () => {
    discord = await FakeDiscord.start();
    discord.addGuild({ id: GUILD, name: 'Shop', channels: [{ id: GENERAL, name: 'general' }] });
    dir = mkdtempSync(join(tmpdir(), 'colloquy-discord-stop-'));
  });

  afterEach(async () => {
    await discord.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('posts the answer it finishes after the gateway closed', async () => {
    // given an agent still thinking when the bot is asked to stop
    const thinking = deferred();
    const asked = deferred();
    class SlowAgent extends BaseAgent {
      name = 'support-agent';
      description = 'Answers slowly';
      instructions = 'Be brief.';
      override model = new MockLanguageModelV3({
        doGenerate: async () => {
          asked.resolve();
          await thinking.promise;
          return answer('Done thinking.');
        },
      });
    }
    const store = new SqliteConversationStore({ path: join(dir, 'colloquy.db') });
    const channel = new DiscordChannel({
      token: discord.token,
      clientOptions: { rest: { api: discord.restApi } },
    });
    const bot = new Bot({
      channels: [channel],
      agents: [new SlowAgent()],
      store,
      logger: silentLogger,
    });
    await bot.start();
    discord.userMessage({
      channelId: GENERAL,
      author: { id: '80351110224678912', username: 'alice' },
      content: `<@${discord.botUser.id}> still there?`,
      mentions: [discord.botUser],
    });
    await asked.promise;

    // when the bot stops, and the agent answers once the channel has closed the gateway
    const stopChannel = channel.stop.bind(channel);
    channel.stop = async () => {
      await stopChannel();
      thinking.resolve();
    };
    await bot.stop();
    await store.close();

    // then the answer went out and is recorded as sent
    expect(discord.posted.map((post) => post.content)).toEqual(['Done thinking.']);
    const check = new SqliteConversationStore({ path: join(dir, 'colloquy.db') });
    const delivery = check.db
      .prepare('SELECT delivery FROM messages WHERE delivery IS NOT NULL')
      .pluck()
      .all();
    await check.close();
    expect(delivery).toEqual(['sent']);
  });
});
