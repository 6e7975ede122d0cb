import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot, ColloquyError } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeDiscord, type FakeDiscordOptions, type FakeDiscordUser } from 'colloquy/testing';
import {
  interactionAgents,
  LONG_ID,
  longIdAsker,
  pressesOf,
  sizeAsker,
  streaming,
} from '../interactions.fixtures.js';
import { lossyHop } from '../../fixtures/lossy-hop.js';
import { addGeneral, GENERAL, GUILD, startDiscordBot } from './discord.fixtures.js';

const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };
const bob: FakeDiscordUser = { id: '80351110224678913', username: 'bob', global_name: 'Bob' };
const inGeneral = `discord:${GUILD}:${GENERAL}`;

describe('commands and buttons on Discord (discord.js against FakeDiscord)', () => {
  let discord: FakeDiscord;
  let dir: string;
  let store: SqliteConversationStore;
  let bot: Bot;
  let errors: ColloquyError[];
  let agents: ReturnType<typeof interactionAgents>;

  async function startBot(fake: FakeDiscordOptions = {}, guildCommands = false) {
    discord = await FakeDiscord.start(fake);
    addGeneral(discord);
    const { support, billing, commands } = agents;
    const options = { agents: [support, billing], commands, store };
    const channelOptions = guildCommands ? { commandGuildIds: [GUILD] } : {};
    ({ bot, errors } = await startDiscordBot(discord, options, channelOptions));
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'colloquy-discord-interactions-'));
    store = new SqliteConversationStore({ path: join(dir, 'colloquy.db') });
    agents = interactionAgents();
  });

  afterEach(async () => {
    await bot?.stop();
    await discord.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const refund = (order: string) =>
    discord.interactions.command({
      channelId: GENERAL,
      user: alice,
      name: 'refund',
      options: { order },
    });

  it('registers the commands as global application commands, or per guild', async () => {
    await startBot({}, true);
    expect(discord.interactions.commands).toBeUndefined();
    expect(discord.interactions.guildCommands.get(GUILD)).toEqual([
      { name: 'refund', description: 'Refund an order', type: 1, options: [] },
      { name: 'status', description: 'Order status', type: 1, options: [] },
      { name: 'ping', description: 'Is the bot up?', type: 1, options: [] },
    ]);
  });

  it('defers a command and edits the answer of its agent into the original response', async () => {
    await startBot();
    expect(discord.interactions.commands).toHaveLength(3);
    const id = discord.interactions.command({
      channelId: GENERAL,
      user: alice,
      name: 'status',
      options: { order: '4242' },
    });
    const [answer] = await discord.waitForPosted(1);
    expect(answer!.content).toBe('support: /status 4242');
    expect(discord.interactions.acknowledgements).toEqual([
      { interactionId: id, type: 5, accepted: true },
    ]);
    expect(
      discord.requests.some(
        (r) => r.method === 'PATCH' && decodeURIComponent(r.path).endsWith('/messages/@original'),
      ),
    ).toBe(true);
    await bot.idle();
    const [turn] = await store.get(inGeneral, { participantIds: [`discord:${alice.id}`] });
    expect(turn).toMatchObject({
      content: '/status 4242',
      metadata: {
        interaction: { type: 'command', name: 'status', args: '4242', agent: 'support' },
      },
    });
    const [reply] = await store.get(inGeneral, { participantIds: ['support'] });
    expect(reply!.metadata.messageId).toBe(answer!.id);
  });

  it('routes a button press to the agent that sent the buttons, answers a double press once, and disables the buttons, recorded as an edit', async () => {
    await startBot();
    refund('7');
    const [asked] = await discord.waitForPosted(1);
    expect(asked!.content).toBe('Refund order 7?');
    expect(asked!.components).toEqual([
      {
        type: 1,
        components: [
          { type: 2, custom_id: 'approve', label: 'Approve', style: 1 },
          { type: 2, custom_id: 'deny', label: 'Deny', style: 4 },
        ],
      },
    ]);
    await bot.idle();
    discord.interactions.press({ messageId: asked!.id, user: alice, customId: 'deny' });
    discord.interactions.press({ messageId: asked!.id, user: alice, customId: 'deny' });
    await discord.waitForPosted(2);
    await discord.waitForRequest((r) => r.path.endsWith('/callback'), 3);
    await bot.idle();
    expect(discord.posted.map((m) => m.content)).toEqual(['Refund order 7?', 'billing: deny']);
    expect(discord.interactions.acknowledgements.map((a) => [a.type, a.accepted])).toEqual([
      [5, true],
      [6, true],
      [6, true],
    ]);
    expect(agents.support.turns).toHaveLength(0);
    expect(discord.posted[0]!.components).toEqual([
      {
        type: 1,
        components: [
          { type: 2, custom_id: 'approve', label: 'Approve', style: 1, disabled: true },
          { type: 2, custom_id: 'deny', label: 'Deny', style: 4, disabled: true },
        ],
      },
    ]);
    const replies = await store.get(inGeneral, { participantIds: ['billing'] });
    const question = replies.find((r) => r.metadata.messageId === asked!.id);
    expect(question).toMatchObject({ content: 'Refund order 7?', editedAt: expect.any(String) });
    expect(() =>
      discord.interactions.press({ messageId: asked!.id, user: alice, customId: 'approve' }),
    ).toThrow(/disabled/);
  });

  it('answers a changed choice in a select, the same choice twice once, and a replayed press once', async () => {
    agents.support = sizeAsker();
    await startBot();
    discord.interactions.command({ channelId: GENERAL, user: alice, name: 'status' });
    const [asked] = await discord.waitForPosted(1);
    expect(asked!.components).toEqual([
      {
        type: 1,
        components: [
          {
            type: 3,
            custom_id: 'size',
            options: [
              { label: 'Small', value: 's' },
              { label: 'Medium', value: 'm' },
              { label: 'Large', value: 'l' },
            ],
          },
        ],
      },
    ]);
    await bot.idle();
    const pick = (value: string) =>
      discord.interactions.press({
        messageId: asked!.id,
        user: alice,
        customId: 'size',
        values: [value],
      });
    pick('s');
    pick('l');
    pick('l');
    discord.replayLastEvents(2);
    await discord.waitForPosted(3);
    await bot.idle();
    expect(discord.posted.map((m) => m.content)).toEqual(['Which size?', 'size s', 'size l']);
    const turns = await store.get(inGeneral, { participantIds: [`discord:${alice.id}`] });
    expect(pressesOf(turns)).toEqual([
      ['s', undefined],
      ['l', undefined],
      ['l', 'repeated'],
    ]);
  });

  it('refuses a press by someone else with one line', async () => {
    await startBot();
    discord.interactions.command({ channelId: GENERAL, user: alice, name: 'refund' });
    const [asked] = await discord.waitForPosted(1);
    await bot.idle();
    discord.interactions.press({ messageId: asked!.id, user: bob, customId: 'approve' });
    const posted = await discord.waitForPosted(2);
    expect(posted[1]!.content).toBe('Those buttons are for the person the message answered.');
    await bot.idle();
    expect(agents.billing.turns).toHaveLength(1);
  });

  it('answers a command it does not know with a clear line', async () => {
    await startBot();
    discord.interactions.command({ channelId: GENERAL, user: alice, name: 'frobnicate' });
    const [answer] = await discord.waitForPosted(1);
    expect(answer!.content).toBe('There is no /frobnicate command; try /refund, /status, /ping.');
  });

  it('reports an acknowledgement the fake refused as late, and still answers in the channel', async () => {
    await startBot({ ackDeadlineMs: 0 });
    discord.interactions.command({ channelId: GENERAL, user: alice, name: 'ping' });
    const [answer] = await discord.waitForPosted(1);
    await bot.idle();
    expect(answer!.content).toBe('pong');
    expect(discord.interactions.acknowledgements.map((a) => a.accepted)).toEqual([false]);
    expect(errors.map((e) => e.message).join('\n')).toMatch(/Unknown interaction/);
  });

  it('answers a command through its deferred response when the answer to the acknowledgement is lost', async () => {
    // given a hop that loses Discord's answer to the first acknowledgement, after Discord took it
    discord = await FakeDiscord.start();
    addGeneral(discord);
    const hop = await lossyHop(new URL(discord.restApi).origin, (req) =>
      /\/interactions\/.*\/callback/.test(req.url ?? ''),
    );
    try {
      const { support, billing, commands } = agents;
      ({ bot, errors } = await startDiscordBot(
        discord,
        { agents: [support, billing], commands, store },
        { clientOptions: { rest: { api: `${hop.origin}/api` } } },
      ));

      // when Alice runs /status and the repeated acknowledgement is refused as one already made
      discord.interactions.command({
        channelId: GENERAL,
        user: alice,
        name: 'status',
        options: { order: '4242' },
      });
      const [answer] = await discord.waitForPosted(1);
      await bot.idle();

      // then the answer is edited into the deferred response, and nothing is reported
      expect(hop.lost()).toBe(1);
      expect(discord.interactions.acknowledgements.map((a) => a.accepted)).toEqual([true, false]);
      expect(answer!.content).toBe('support: /status 4242');
      expect(
        discord.requests.some(
          (r) => r.method === 'PATCH' && decodeURIComponent(r.path).endsWith('/messages/@original'),
        ),
      ).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await bot.stop();
      await hop.close();
    }
  });

  it('carries a custom_id longer than Discord allows as its place, and routes the press by it', async () => {
    agents.billing = longIdAsker();
    await startBot();
    discord.interactions.command({ channelId: GENERAL, user: alice, name: 'refund' });
    const [asked] = await discord.waitForPosted(1);
    expect(asked!.components).toEqual([
      { type: 1, components: [{ type: 2, custom_id: '#0', label: 'Approve', style: 2 }] },
    ]);
    await bot.idle();
    discord.interactions.press({ messageId: asked!.id, user: alice, customId: '#0' });
    const posted = await discord.waitForPosted(2);
    expect(posted[1]!.content).toBe('billing: the long one');
    await bot.idle();
    const [press] = await store.get(inGeneral, {
      limit: 1,
      participantIds: [`discord:${alice.id}`],
    });
    expect(press!.metadata.interaction).toMatchObject({ id: LONG_ID });
  });

  it('shows the buttons of a streamed answer to a command under its final text', async () => {
    agents.billing = streaming(agents.billing);
    await startBot();
    refund('7');
    const [asked] = await discord.waitForPosted(1);
    await discord.waitForRequest(
      (r) => r.method === 'PATCH' && r.path.endsWith(`/messages/${asked!.id}`),
    );
    await bot.idle();
    expect(asked!.content).toBe('Refund order 7?');
    expect(asked!.components).toMatchObject([
      { components: [{ custom_id: 'approve' }, { custom_id: 'deny' }] },
    ]);
    discord.interactions.press({ messageId: asked!.id, user: alice, customId: 'deny' });
    const posted = await discord.waitForPosted(2);
    expect(posted[1]!.content).toBe('billing: deny');
  });
});
