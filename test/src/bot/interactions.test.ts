import { afterEach, describe, expect, it } from 'vitest';
import { Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import type { Command } from 'colloquy';
import { MemoryChannel } from 'colloquy/testing';
import { scriptedAgent } from './bot.fixtures.js';

const approve = { id: 'approve', label: 'Approve', style: 'primary' as const };

describe('commands and presses', () => {
  let bot: Bot | undefined;
  afterEach(async () => {
    await bot?.stop();
  });

  function setUp(commands?: Command[]) {
    const channel = new MemoryChannel({ scope: 'dm' });
    const support = scriptedAgent('support', (m) => `support: ${m.content}`);
    const billing = scriptedAgent('billing', (m) => `billing: ${m.content}`);
    Object.assign(billing, {
      run: async () => ({ output: 'Refund?', metadata: { actions: [approve] } }),
    });
    const store = new InMemoryConversationStore();
    bot = new Bot({
      channels: [channel],
      agents: [support, billing],
      store,
      logger: silentLogger,
      ...(commands && { commands }),
    });
    return { channel, support, billing, store };
  }

  it('answers a command by its agent only', async () => {
    const { channel, support } = setUp([
      { name: 'ask', description: 'Ask support', agent: 'support' },
    ]);
    await bot!.start();
    await channel.receive('/ask where is 4242', {
      interaction: { type: 'command', name: 'ask', args: 'where is 4242' },
    });
    await bot!.idle();
    expect(channel.sent.map((m) => m.content)).toEqual(['support: /ask where is 4242']);
    expect(support.runs[0]?.metadata.interaction).toMatchObject({ agent: 'support' });
  });

  it('answers an unknown command with one line and no agent', async () => {
    const { channel, support } = setUp([{ name: 'ask', description: 'Ask', agent: 'support' }]);
    await bot!.start();
    await channel.receive('/nope', { interaction: { type: 'command', name: 'nope', args: '' } });
    await bot!.idle();
    expect(channel.sent.map((m) => m.content)).toEqual(['There is no /nope command; try /ask.']);
    expect(support.runs).toHaveLength(0);
  });

  it('answers a command by its handler', async () => {
    const { channel } = setUp([{ name: 'ping', description: 'Ping', handler: () => 'pong' }]);
    await bot!.start();
    await channel.receive('/ping', { interaction: { type: 'command', name: 'ping', args: '' } });
    await bot!.idle();
    expect(channel.sent.map((m) => m.content)).toEqual(['pong']);
  });

  it('routes a press to the agent whose message carried the button', async () => {
    const { channel, support, store } = setUp([
      { name: 'refund', description: 'Refund', agent: 'billing' },
    ]);
    Object.assign(support, { shouldRespond: () => true });
    await bot!.start();
    await channel.receive('/refund 1', {
      interaction: { type: 'command', name: 'refund', args: '1' },
    });
    await bot!.idle();
    expect(channel.sent[0]?.actions).toEqual([approve]);
    const press = { type: 'button' as const, id: 'approve', value: '', on: 'out-2' };
    await channel.receive('Approve', { interaction: press, messageId: 'press-1' });
    await channel.receive('Approve', { interaction: press, messageId: 'press-1' });
    await bot!.idle();
    expect(channel.sent.map((m) => m.content)).toEqual(['Refund?', 'Refund?']);
    const turns = await store.get(channel.conversationId);
    const pressed = turns.find((t) => t.metadata.messageId === 'press-1');
    expect(pressed?.metadata.interaction).toMatchObject({ agent: 'billing', value: 'approve' });
    expect(pressed?.metadata.replyToParticipantId).toBe('billing');
  });

  it('answers a second press of the same button once, even by a bot started again', async () => {
    const commands = [{ name: 'refund', description: 'Refund', agent: 'billing' }];
    const { channel, support, billing, store } = setUp(commands);
    await bot!.start();
    await channel.receive('/refund 1', {
      interaction: { type: 'command', name: 'refund', args: '1' },
    });
    await bot!.idle();
    const press = { type: 'button' as const, id: 'approve', value: '', on: 'out-2' };
    await channel.receive('Approve', { interaction: press, messageId: 'press-1' });
    await channel.receive('Approve', { interaction: press, messageId: 'press-2' });
    await bot!.idle();
    await bot!.stop();
    const logger = silentLogger;
    bot = new Bot({ channels: [channel], agents: [support, billing], store, commands, logger });
    await bot.start();
    await channel.receive('Approve', { interaction: press, messageId: 'press-3' });
    await bot.idle();
    expect(channel.sent.map((m) => m.content)).toEqual(['Refund?', 'Refund?']);
    const turns = await store.get(channel.conversationId, { participantIds: ['memory:alice'] });
    expect(turns.map((t) => t.metadata.interaction)).toMatchObject([
      { type: 'command' },
      { agent: 'billing' },
      { refused: 'repeated' },
      { refused: 'repeated' },
    ]);
  });

  it('refuses a press on a message it does not know', async () => {
    const { channel } = setUp();
    await bot!.start();
    await channel.receive('Approve', {
      interaction: { type: 'button', id: 'approve', value: '', on: 'nowhere' },
    });
    await bot!.idle();
    expect(channel.sent.map((m) => m.content)).toEqual(['That button is no longer available.']);
  });

  it('keeps a press among the turns that concern the agent whose message it was on, not another', async () => {
    const { channel, store } = setUp([{ name: 'refund', description: 'Refund', agent: 'billing' }]);
    await bot!.start();
    await channel.receive('/refund 1', {
      scope: 'channel',
      interaction: { type: 'command', name: 'refund', args: '1' },
    });
    await bot!.idle();
    const press = { type: 'button' as const, id: 'approve', value: '', on: 'out-2' };
    await channel.receive('Approve', { scope: 'channel', interaction: press, messageId: 'p-1' });
    await bot!.idle();
    const seen = async (agent: string) =>
      (await store.get(channel.conversationId, { concerning: { aliases: [agent] } })).map(
        (t) => t.content,
      );
    expect(await seen('billing')).toEqual(['/refund 1', 'Refund?', 'Approve', 'Refund?']);
    expect(await seen('support')).toEqual([]);
  });

  it('does not start when a command names an agent on no channel, and says so in one line', async () => {
    setUp([{ name: 'refund', description: 'Refund', agent: 'biling' }]);
    await expect(bot!.start()).rejects.toThrow(
      'the command /refund is answered by agent "biling", which is on no channel (agents: support, billing)',
    );
  });

  it('answers a command whose agent is on another channel with one line', async () => {
    const sales = new MemoryChannel({ type: 'slack', channelId: 'sales', scope: 'dm' });
    const orders = new MemoryChannel({ type: 'telegram', channelId: 'orders', scope: 'dm' });
    const support = scriptedAgent('support', (m) => `support: ${m.content}`);
    const billing = scriptedAgent('billing', (m) => `billing: ${m.content}`);
    bot = new Bot({
      channels: [sales, orders],
      agents: new Map([
        [sales, [support]],
        [orders, [billing]],
      ]),
      commands: [{ name: 'refund', description: 'Refund', agent: 'billing' }],
      store: new InMemoryConversationStore(),
      logger: silentLogger,
    });
    await bot.start();
    await sales.receive('/refund 1', {
      interaction: { type: 'command', name: 'refund', args: '1' },
    });
    await orders.receive('/refund 2', {
      interaction: { type: 'command', name: 'refund', args: '2' },
    });
    await bot.idle();
    expect(sales.sent.map((m) => m.content)).toEqual(['/refund is not answered here.']);
    expect(orders.sent.map((m) => m.content)).toEqual(['billing: /refund 2']);
    expect(support.runs).toHaveLength(0);
  });

  it('answers presses of a button that stays, and refuses a press once a once button was answered', async () => {
    const { channel, store } = setUp([{ name: 'refund', description: 'Refund', agent: 'billing' }]);
    const more = { id: 'more', label: 'More', once: false };
    await bot!.start();
    await channel.receive('/refund 1', {
      interaction: { type: 'command', name: 'refund', args: '1' },
    });
    await bot!.idle();
    const reply = (await store.get(channel.conversationId)).find((t) => t.content === 'Refund?')!;
    const on = reply.metadata.messageId!;
    // The reply as an agent would have recorded it with a button that stays.
    reply.metadata.actions = [approve, more, { id: 'deny', label: 'Deny' }];
    await store.append({
      ...reply,
      id: 'with-more',
      metadata: { ...reply.metadata, messageId: 'm-2' },
    });
    const press = (id: string, where: string, messageId: string) =>
      channel.receive(id, {
        interaction: { type: 'button', id, value: '', on: where },
        messageId,
      });
    await press('more', 'm-2', 'p-1');
    await press('approve', 'm-2', 'p-2');
    await press('deny', 'm-2', 'p-3');
    await press('approve', on, 'p-4');
    await bot!.idle();
    const turns = await store.get(channel.conversationId, { participantIds: ['memory:alice'] });
    expect(turns.slice(1).map((t) => t.metadata.interaction)).toMatchObject([
      { id: 'more', agent: 'billing' },
      { id: 'approve', agent: 'billing' },
      { id: 'deny', refused: 'used' },
      { id: 'approve', agent: 'billing' },
    ]);
  });

  it('answers one of two presses of a once button made at the same moment, and refuses the other as used', async () => {
    const { channel, store } = setUp([{ name: 'refund', description: 'Refund', agent: 'billing' }]);
    await bot!.start();
    // A reply as an agent would record it with Approve, Deny and two buttons that stay.
    const stays = [
      { id: 'more', label: 'More', once: false },
      { id: 'refresh', label: 'Refresh', once: false },
    ];
    await channel.receive('/refund 1', {
      interaction: { type: 'command', name: 'refund', args: '1' },
    });
    await bot!.idle();
    const [asked] = await store.get(channel.conversationId, { participantIds: ['billing'] });
    const actions = [approve, { id: 'deny', label: 'Deny' }, ...stays];
    const metadata = { ...asked!.metadata, messageId: 'm-2', actions };
    await store.append({ ...asked!, id: 'with-deny', metadata });
    const press = (id: string, messageId: string) =>
      channel.receive(id, { interaction: { type: 'button', id, value: '', on: 'm-2' }, messageId });
    // Both delivered before either is committed.
    await Promise.all([press('more', 'p-1'), press('refresh', 'p-2')]);
    await Promise.all([press('approve', 'p-3'), press('deny', 'p-4')]);
    await bot!.idle();
    const turns = await store.get(channel.conversationId, { participantIds: ['memory:alice'] });
    expect(turns.slice(1).map((t) => t.metadata.interaction)).toMatchObject([
      { id: 'more', agent: 'billing' },
      { id: 'refresh', agent: 'billing' },
      { id: 'approve', agent: 'billing' },
      { id: 'deny', refused: 'used' },
    ]);
    expect(channel.sent.map((m) => m.content).slice(-1)).toEqual([
      'That button is no longer available.',
    ]);
  });

  it('answers "More" pressed three times, and a double press of it once', async () => {
    const { channel, store } = setUp([{ name: 'refund', description: 'Refund', agent: 'billing' }]);
    await bot!.start();
    await channel.receive('/refund 1', {
      interaction: { type: 'command', name: 'refund', args: '1' },
    });
    await bot!.idle();
    const reply = (await store.get(channel.conversationId)).find((t) => t.content === 'Refund?')!;
    await store.append({
      ...reply,
      id: 'with-more',
      metadata: {
        ...reply.metadata,
        messageId: 'm-2',
        actions: [{ id: 'more', label: 'More', once: false }],
      },
    });
    const start = Date.now() - 60_000;
    const press = async (messageId: string, afterMs: number) => {
      await channel.receive('more', {
        interaction: { type: 'button', id: 'more', value: '', on: 'm-2' },
        messageId,
        timestamp: new Date(start + afterMs).toISOString(),
      });
      await bot!.idle();
    };
    await press('p-1', 0);
    await press('p-2', 10_000);
    await press('p-3', 10_300); // a double click of p-2
    await press('p-4', 20_000);
    const presses = (await store.get(channel.conversationId)).filter(
      (t) => t.participant.id === 'memory:alice' && t.metadata.messageId?.startsWith('p-'),
    );
    expect(presses.map((t) => t.metadata.interaction)).toMatchObject([
      { id: 'more', agent: 'billing' },
      { id: 'more', agent: 'billing' },
      { id: 'more', refused: 'repeated' },
      { id: 'more', agent: 'billing' },
    ]);
    // The command's answer, then one answer to each press answered.
    expect(channel.sent.filter((m) => m.content === 'Refund?')).toHaveLength(4);
  });

  it('reads only the presses on the message pressed, however many turns came after it', async () => {
    // given a once button answered, then thousands of turns in the conversation after it
    const commands = [{ name: 'refund', description: 'Refund', agent: 'billing' }];
    const store = new InMemoryConversationStore({ maxMessagesPerConversation: 10_000 });
    const channel = new MemoryChannel({ scope: 'dm' });
    const billing = Object.assign(
      scriptedAgent('billing', () => 'Refund?'),
      {
        run: async () => ({ output: 'Refund?', metadata: { actions: [approve] } }),
      },
    );
    bot = new Bot({
      channels: [channel],
      agents: [billing],
      store,
      commands,
      logger: silentLogger,
    });
    await bot.start();
    await channel.receive('/refund 1', {
      interaction: { type: 'command', name: 'refund', args: '1' },
    });
    await bot.idle();
    const reply = (await store.get(channel.conversationId)).find((t) => t.content === 'Refund?')!;
    const on = reply.metadata.messageId!;
    const after = (ms: number) => new Date(Date.parse(reply.timestamp) + ms).toISOString();
    const press = (messageId: string, timestamp: string) =>
      channel.receive('Approve', {
        interaction: { type: 'button', id: 'approve', value: '', on },
        messageId,
        timestamp,
      });
    await press('p-1', after(1));
    await bot.idle();
    for (let i = 0; i < 3000; i++) {
      await store.append(
        channel.turn(`chatter ${i}`, { messageId: `c-${i}`, timestamp: after(10 + i) }),
      );
    }

    // when the button is pressed again, the store's reads counted
    let read = 0;
    const get = store.get.bind(store);
    store.get = async (...args) => {
      const turns = await get(...args);
      read += turns.length;
      return turns;
    };
    await press('p-2', after(60_000));
    await bot.idle();

    // then the press is refused as used, found among the presses on that message alone
    const turns = await get(channel.conversationId, { sinceTimestamp: after(60_000) });
    expect(turns[0]?.metadata.interaction).toMatchObject({ id: 'approve', refused: 'used' });
    expect(read).toBeLessThan(10);
  });
});
