import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BaseAgent, Bot, MalformedEventError, type ColloquyError } from 'colloquy';
import { DiscordChannel } from 'colloquy/discord';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeDiscord, type FakeDiscordUser } from 'colloquy/testing';
import { answer } from '../../fixtures/model-answer.js';
import { watched } from '../../fixtures/watched-store.js';

const GUILD = '81384788765712384';
const GENERAL = '290926798999357250';
const THREAD = '1202600000000000001';
const DM = '1202570000000000001';
const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };
const ciBot: FakeDiscordUser = { id: '1202000000000000009', username: 'ci-bot', bot: true };
const inGeneral = `discord:${GUILD}:${GENERAL}`;

class SupportAgent extends BaseAgent {
  name = 'support-agent';
  description = 'Answers questions in Discord';
  instructions = 'Be brief.';
  reply = 'On it.';
  override model = new MockLanguageModelV3({ doGenerate: async () => answer(this.reply) });
}

describe('a Bot on Discord (discord.js against FakeDiscord, SQLite store)', () => {
  let discord: FakeDiscord;
  let bot: Bot;
  let agent: SupportAgent;
  let db: ReturnType<typeof watched>;
  let errors: ColloquyError[];
  let dir: string;

  beforeEach(async () => {
    discord = await FakeDiscord.start();
    discord.addGuild({
      id: GUILD,
      name: 'Test Guild',
      channels: [{ id: GENERAL, name: 'general' }],
    });
    discord.addThread({ id: THREAD, guildId: GUILD, parentId: GENERAL, name: 'deploys' });
    discord.addDmChannel({ id: DM, recipient: alice });
    dir = mkdtempSync(join(tmpdir(), 'colloquy-discord-'));
    db = watched(new SqliteConversationStore({ path: join(dir, 'colloquy.db') }));
    agent = new SupportAgent();
    errors = [];
    const channel = new DiscordChannel({
      token: discord.token,
      clientOptions: { rest: { api: discord.restApi } },
    });
    bot = new Bot({ channels: [channel], agents: [agent], store: db.store });
    bot.catch((error) => void errors.push(error));
    await bot.start();
  });

  afterEach(async () => {
    await bot.stop();
    await discord.close();
    await db.store.close?.();
    rmSync(dir, { recursive: true, force: true });
  });

  const mention = (content: string) => ({
    channelId: GENERAL,
    author: alice,
    content: `<@${discord.botUser.id}> ${content}`,
    mentions: [discord.botUser],
  });

  it('answers a mention in a channel as a reply and stores both turns', async () => {
    const inbound = discord.userMessage(mention('where is my order?'));
    const [reply] = await discord.waitForPosted(1);
    expect(reply).toMatchObject({
      channel_id: GENERAL,
      content: 'On it.',
      type: 19,
      message_reference: { message_id: inbound.id },
    });

    const [asked, answered] = await db.turns(inGeneral, (t) => t.length === 2);
    expect(asked).toMatchObject({
      id: `discord:${GENERAL}:${inbound.id}`,
      scope: 'channel',
      participant: { kind: 'user', id: `discord:${alice.id}`, displayName: 'Alice' },
      metadata: {
        channelType: 'discord',
        channelId: GENERAL,
        channelName: 'general',
        messageId: inbound.id,
        mentions: [`discord:${discord.botUser.id}`],
      },
    });
    expect(answered).toMatchObject({
      id: `discord:${GENERAL}:${inbound.id}:support-agent:reply`,
      scope: 'channel',
      participant: { kind: 'agent', id: 'support-agent' },
      content: 'On it.',
      metadata: { channelId: GENERAL, messageId: reply?.id, replyToMessageId: inbound.id },
    });
  });

  it('answers a DM without a mention', async () => {
    discord.userMessage({ channelId: DM, author: alice, content: 'hello?' });
    const [reply] = await discord.waitForPosted(1);
    expect(reply?.channel_id).toBe(DM);
    const turns = await db.turns(`discord:dm:${DM}`, (t) => t.length === 2);
    expect(turns.map((t) => [t.scope, t.participant.kind])).toEqual([
      ['dm', 'user'],
      ['dm', 'agent'],
    ]);
  });

  it('answers in a thread, stored under the thread conversation', async () => {
    discord.userMessage({ ...mention('status?'), channelId: THREAD });
    const [reply] = await discord.waitForPosted(1);
    expect(reply?.channel_id).toBe(THREAD);
    const turns = await db.turns(`discord:${GUILD}:${GENERAL}:${THREAD}`, (t) => t.length === 2);
    expect(turns.map((t) => [t.scope, t.metadata.channelId, t.metadata.threadId])).toEqual([
      ['thread', GENERAL, THREAD],
      ['thread', GENERAL, THREAD],
    ]);
  });

  it('answers a reply to its own message that does not mention it', async () => {
    discord.userMessage(mention('first question'));
    const [first] = await discord.waitForPosted(1);
    await db.turns(inGeneral, (t) => t.length === 2);
    agent.reply = 'Second answer.';
    const followUp = discord.userMessage({
      channelId: GENERAL,
      author: alice,
      content: 'and then?',
      referencedMessage: first?.id,
    });
    const posted = await discord.waitForPosted(2);
    expect(posted[1]).toMatchObject({
      content: 'Second answer.',
      message_reference: { message_id: followUp.id },
    });
    const turns = await db.turns(inGeneral, (t) => t.length === 4);
    expect(turns.find((t) => t.content === 'and then?')?.metadata).toMatchObject({
      replyToMessageId: first?.id,
      replyToParticipantId: `discord:${discord.botUser.id}`,
    });
  });

  it('stores and answers a message replayed after a RESUME once', async () => {
    discord.userMessage(mention('only once please'));
    await db.turns(inGeneral, (t) => t.length === 2);
    await discord.forceReconnect({ replayLast: 3 });
    discord.replayLastEvents(3);
    agent.reply = 'Next.';
    discord.userMessage(mention('next'));
    await discord.waitForPosted((m) => m.content === 'Next.');
    const turns = await db.turns(inGeneral, (t) => t.length === 4);
    expect(turns.map((t) => t.content)).toEqual([
      `<@${discord.botUser.id}> only once please`,
      'On it.',
      `<@${discord.botUser.id}> next`,
      'Next.',
    ]);
    expect(discord.posted).toHaveLength(2);
  });

  it('records an edit and a deletion without answering again', async () => {
    const inbound = discord.userMessage(mention('typo'));
    await discord.waitForPosted(1);
    discord.editMessage({ messageId: inbound.id, content: `<@${discord.botUser.id}> fixed` });
    await db.turns(inGeneral, (t) => t[0]?.content.endsWith('fixed') === true);
    discord.deleteMessage({ messageId: inbound.id });
    await db.turns(inGeneral, (t) => typeof t[0]?.deletedAt === 'string');
    await bot.stop(); // lets any turn still in flight finish
    const [edited] = await db.turns(inGeneral, () => true);
    expect(edited).toMatchObject({ content: `<@${discord.botUser.id}> fixed` });
    expect(typeof edited?.editedAt).toBe('string');
    expect(discord.posted).toHaveLength(1);
  });

  it('ignores the echo of its own replies', async () => {
    discord.userMessage(mention('ping'));
    await db.turns(inGeneral, (t) => t.length === 2);
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'not for the bot' });
    const turns = await db.turns(inGeneral, (t) => t.length >= 3);
    expect(turns.map((t) => t.participant.id)).toEqual([
      `discord:${alice.id}`,
      'support-agent',
      `discord:${alice.id}`,
    ]);
  });

  it('records another bot as an agent without answering it', async () => {
    discord.userMessage({ ...mention('deploy done'), author: ciBot });
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'noted' });
    const turns = await db.turns(inGeneral, (t) => t.length === 2);
    await bot.stop(); // lets any turn still in flight finish
    expect(turns[0]?.participant).toEqual({
      kind: 'agent',
      id: `discord:${ciBot.id}`,
      displayName: 'ci-bot',
    });
    expect(discord.posted).toHaveLength(0);
  });

  it('splits a 5,000-character answer into ordered parts of at most 2,000', async () => {
    const code = '```ts\n' + 'const x = "🙂";\n'.repeat(120) + '```';
    agent.reply = `${'Intro 🙂 words. '.repeat(100)}\n\n${code}\n\n${'Outro words. '.repeat(80)}`;
    expect(agent.reply.length).toBeGreaterThan(4500);
    const inbound = discord.userMessage(mention('explain'));
    const [answered] = (await db.turns(inGeneral, (t) => t.length === 2)).slice(1);
    const parts = discord.posted;
    expect(parts.length).toBeGreaterThanOrEqual(3);
    expect(parts.every((p) => p.content.length <= 2000)).toBe(true);
    expect(parts.every((p) => (p.content.match(/```/g) ?? []).length % 2 === 0)).toBe(true);
    expect(parts[0]?.message_reference?.message_id).toBe(inbound.id);
    expect(parts.slice(1).every((p) => p.message_reference === undefined)).toBe(true);
    expect(parts.map((p) => p.content).join('')).toContain('Outro words.');
    expect([answered?.metadata.messageId, ...(answered?.metadata.partMessageIds ?? [])]).toEqual(
      parts.map((p) => p.id),
    );
  });

  it('waits out a 429 and then answers', async () => {
    discord.failNext({ status: 429, retryAfter: 0.05 });
    discord.userMessage(mention('busy?'));
    await discord.waitForPosted(1);
    expect(
      discord.requests
        .filter((r) => r.method === 'POST' && r.path.endsWith('/messages'))
        .map((r) => r.status),
    ).toEqual([429, 200]);
    await db.turns(inGeneral, (t) => t.length === 2);
    expect(errors).toEqual([]);
  });

  it('reports a malformed event and keeps answering', async () => {
    discord.dispatch('MESSAGE_CREATE', { id: 'x', channel_id: GENERAL, content: 'broken' });
    discord.userMessage(mention('still there?'));
    await discord.waitForPosted(1);
    expect(errors.some((error) => error instanceof MalformedEventError)).toBe(true);
  });
});
