import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Bot, silentLogger } from 'colloquy';
import { DiscordChannel } from 'colloquy/discord';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeDiscord, type FakeDiscordUser } from 'colloquy/testing';
import { scriptedAgent } from '../../src/bot/bot.fixtures.js';

const GUILD = '81384788765712384';
const GENERAL = '290926798999357250';
/** A guild whose events go to shard 1 of 2 (`(id >> 22) % 2`), and its channel. */
const OTHER_GUILD = '81384788769906688';
const OTHER = '290926798999357251';
const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };

describe('Discord from two instances sharing one store', () => {
  let discord: FakeDiscord;
  let dir: string;
  const bots: Bot[] = [];
  const stores: SqliteConversationStore[] = [];

  beforeEach(async () => {
    discord = await FakeDiscord.start();
    discord.addGuild({
      id: GUILD,
      name: 'Test Guild',
      channels: [{ id: GENERAL, name: 'general' }],
    });
    dir = mkdtempSync(join(tmpdir(), 'colloquy-discord-shared-'));
  });
  afterEach(async () => {
    for (const bot of bots.splice(0)) await bot.stop();
    for (const store of stores.splice(0)) await store.close();
    await discord.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function instance(shardCount = 1): Promise<Bot> {
    const store = SqliteConversationStore.open(join(dir, 'colloquy.db'));
    stores.push(store);
    const bot = new Bot({
      channels: [
        new DiscordChannel({
          token: discord.token,
          clientOptions: { rest: { api: discord.restApi } },
          shardCount,
        }),
      ],
      agents: [
        scriptedAgent('support-agent', (turn) => `re: ${turn.content.replace(/^<@\d+> /, '')}`),
      ],
      store,
      logger: silentLogger,
      shared: { leaseTtlMs: 600, claimEveryMs: 200 },
    });
    bots.push(bot);
    await bot.start();
    return bot;
  }

  const connections = () => discord.identifies.length + discord.resumes;
  async function until(check: () => boolean): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  const ask = (content: string, channelId = GENERAL) =>
    discord.userMessage({
      channelId,
      author: alice,
      content: `<@${discord.botUser.id}> ${content}`,
      mentions: [discord.botUser],
    });

  it('connects one instance to the gateway; the standby takes over when it stops', async () => {
    // given a first instance on the gateway, then a second standing by
    const first = await instance();
    await until(() => connections() === 1);
    await instance();
    ask('first question');
    await discord.waitForPosted(1);
    expect(connections()).toBe(1);
    // when the first instance stops, and someone asks again
    await first.stop();
    await until(() => connections() === 2);
    ask('second question');
    const posted = await discord.waitForPosted(2);
    // then one instance at a time held the gateway (the second RESUMEd the session the first
    // handed over), and each question was answered once
    expect([discord.identifies.length, discord.resumes]).toEqual([1, 1]);
    expect(posted.map((message) => message.content)).toEqual([
      're: first question',
      're: second question',
    ]);
    const stored = stores[1]!.db
      .prepare(`SELECT count(*) FROM messages WHERE participant_id = 'discord:${alice.id}'`)
      .pluck()
      .get();
    expect(stored).toBe(2);
  });

  it('holds each of two shards by lease; the standby RESUMEs both when it stops', async () => {
    // given a bot of two shards, with a guild on each, run by two instances
    await discord.close();
    discord = await FakeDiscord.start({ shards: 2 });
    discord.addGuild({
      id: GUILD,
      name: 'Shard zero',
      channels: [{ id: GENERAL, name: 'general' }],
    });
    discord.addGuild({
      id: OTHER_GUILD,
      name: 'Shard one',
      channels: [{ id: OTHER, name: 'help' }],
    });
    expect([discord.shardOf(GUILD), discord.shardOf(OTHER_GUILD)]).toEqual([0, 1]);
    const first = await instance(2);
    await until(() => connections() === 2);
    await instance(2);

    // when someone asks in each guild
    ask('on shard zero');
    ask('on shard one', OTHER);
    await discord.waitForPosted(2);

    // then the first instance identified once per shard, and the second stood by
    expect(discord.identifies.map((identify) => identify.shard).sort()).toEqual([
      [0, 2],
      [1, 2],
    ]);
    expect(connections()).toBe(2);

    // when the first instance stops, the second RESUMEs both sessions and answers in both
    await first.stop();
    await until(() => discord.resumes === 2);
    ask('zero again');
    ask('one again', OTHER);
    const posted = await discord.waitForPosted(4);
    expect(posted.map((message) => message.content).sort()).toEqual([
      're: on shard one',
      're: on shard zero',
      're: one again',
      're: zero again',
    ]);
    expect(discord.identifies).toHaveLength(2);
    const stored = stores[1]!.db
      .prepare(`SELECT count(*) FROM messages WHERE participant_id = 'discord:${alice.id}'`)
      .pluck()
      .get();
    expect(stored).toBe(4);
  });
});
