import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import { DiscordChannel } from 'colloquy/discord';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeDiscord, type FakeDiscordUser } from 'colloquy/testing';
import { PacedAgent } from '../../fixtures/paced-model.js';
import { botOn } from '../../fixtures/gated-agent.js';
import { revisionsOf } from '../../fixtures/revisions.js';
import { tempDirs } from '../../fixtures/temp-dirs.js';
import { watched } from '../../fixtures/watched-store.js';

const temp = tempDirs();

const GUILD = '81384788765712384';
const GENERAL = '290926798999357250';
const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };

/** Alice asks the bot in #general. */
const askDeploy = (discord: FakeDiscord) =>
  discord.userMessage({
    channelId: GENERAL,
    author: alice,
    content: `<@${discord.botUser.id}> deploy status?`,
    mentions: [discord.botUser],
  });

describe('a reply streamed on Discord (discord.js against FakeDiscord)', () => {
  let discord: FakeDiscord;
  let agent: PacedAgent;
  let bot: Bot;

  beforeEach(async () => {
    discord = await FakeDiscord.start();
    discord.addGuild({ id: GUILD, name: 'Guild', channels: [{ id: GENERAL, name: 'general' }] });
    agent = new PacedAgent();
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
    const asked = askDeploy(discord);
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

describe("a streamed Discord reply and the MESSAGE_UPDATEs of the bot's own edits", () => {
  it('records the reply as the agent wrote it, not as edited, and still records a person’s edit', async () => {
    // given a bot capturing into SQLite, and a reply that grows by an edit, which Discord sends
    // back as a MESSAGE_UPDATE
    const discord = await FakeDiscord.start();
    discord.addGuild({ id: GUILD, name: 'Guild', channels: [{ id: GENERAL, name: 'general' }] });
    const sqlite = new SqliteConversationStore({ path: join(temp.make('discord-echo'), 'c.db') });
    const db = watched(sqlite);
    const agent = new PacedAgent();
    const channel = new DiscordChannel({
      token: discord.token,
      clientOptions: { rest: { api: discord.restApi } },
    });
    const bot = new Bot({
      channels: [channel],
      agents: [agent],
      store: db.store,
      logger: silentLogger,
    });
    await bot.start();
    const inGeneral = `discord:${GUILD}:${GENERAL}`;
    try {
      // when the reply is streamed, and then Alice edits her question
      const asked = askDeploy(discord);
      await agent.paced.started;
      agent.paced.say('Deploy 812');
      await discord.waitForPosted(1);
      agent.paced.finish(' is live.');
      await discord.waitForRequest((request) => request.method === 'PATCH');
      discord.editMessage({ messageId: asked.id, content: `<@${discord.botUser.id}> status?` });
      // the gateway delivers in order: once Alice's edit is recorded, the echo was handled
      await db.turns(inGeneral, (t) => t[0]?.content.endsWith('status?') === true);
      await bot.idle();

      // then Alice's question is edited and the reply is as the agent wrote it, never edited
      const [question, reply] = await bot.store.get(inGeneral);
      expect(question?.editedAt).toBeDefined();
      const revisions = revisionsOf(sqlite, reply!.id);
      expect(reply).toMatchObject({
        content: 'Deploy 812 is live.',
        participant: { kind: 'agent' },
      });
      expect({ editedAt: reply?.editedAt, revisions }).toEqual({
        editedAt: undefined,
        revisions: [],
      });
    } finally {
      await bot.stop();
      await discord.close();
    }
  });
});

describe('edits Discord rate-limits (discord.js against FakeDiscord)', () => {
  it('answers an edit past the limit 429 with retry_after and the rate-limit headers', async () => {
    const discord = await FakeDiscord.start({ editLimit: { calls: 1, perMs: 60_000 } });
    discord.addGuild({ id: GUILD, name: 'Guild', channels: [{ id: GENERAL, name: 'general' }] });
    try {
      const headers = {
        authorization: `Bot ${discord.token}`,
        'content-type': 'application/json',
      };
      const url = `${discord.restApi}/v10/channels/${GENERAL}/messages`;
      const posted = (await (
        await fetch(url, { method: 'POST', headers, body: JSON.stringify({ content: 'a' }) })
      ).json()) as { id: string };
      const edit = () =>
        fetch(`${url}/${posted.id}`, {
          method: 'PATCH',
          headers,
          body: JSON.stringify({ content: 'b' }),
        });
      expect((await edit()).status).toBe(200);
      const limited = await edit();
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await limited.json()).toMatchObject({
        retry_after: expect.any(Number),
        global: false,
      });
    } finally {
      await discord.close();
    }
  });

  it('waits out a 429 on an edit and shows the whole answer', async () => {
    const discord = await FakeDiscord.start({ editLimit: { calls: 1, perMs: 1000 } });
    discord.addGuild({ id: GUILD, name: 'Guild', channels: [{ id: GENERAL, name: 'general' }] });
    const agent = new PacedAgent();
    const channel = new DiscordChannel({
      token: discord.token,
      clientOptions: { rest: { api: discord.restApi } },
    });
    const bot = await botOn(channel, agent);
    try {
      askDeploy(discord);
      await agent.paced.started;
      agent.paced.say('Deploy 812');
      await discord.waitForPosted(1);
      agent.paced.say(' is');
      await discord.waitForRequest((request) => request.method === 'PATCH');
      agent.paced.finish(' live.');
      await discord.waitForRequest(
        (request) => request.method === 'PATCH' && request.status === 429,
      );
      await discord.waitForRequest(
        (request) =>
          request.method === 'PATCH' &&
          request.status === 200 &&
          (request.body as { content?: string }).content === 'Deploy 812 is live.',
      );
      await bot.idle();
      expect(discord.posted[0]?.content).toBe('Deploy 812 is live.');
    } finally {
      await bot.stop();
      await discord.close();
    }
  });
});
