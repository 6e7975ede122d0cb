import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Bot, ColloquyError, InMemoryConversationStore, StoreError, silentLogger } from 'colloquy';
import { MemoryChannel } from 'colloquy/testing';
import { scriptedAgent } from './bot.fixtures.js';

describe('bot.receive: a turn from an event colloquy does not handle', () => {
  let store: InMemoryConversationStore;
  let bot: Bot | undefined;

  beforeEach(() => {
    store = new InMemoryConversationStore();
    bot = undefined;
  });

  afterEach(async () => {
    await bot?.stop();
  });

  async function start(channels: MemoryChannel[]) {
    const agent = scriptedAgent('support-agent', (turn) => `re: ${turn.content}`);
    bot = new Bot({ channels, agents: [agent], store, logger: silentLogger });
    await bot.start();
    return agent;
  }

  it('is stored and answered as a turn its channel delivered', async () => {
    // given a running bot on a channel
    const channel = new MemoryChannel();
    await start([channel]);
    const turn = channel.turn('@support-agent is the shop open?');

    // when bot code hands it a turn it read from a platform event of its own
    const { handled } = await bot!.receive(turn);
    await handled;

    // then the turn is stored, answered on its channel, and its run recorded as answered
    expect((await store.getMessage(turn.conversationId, turn.id))?.content).toBe(turn.content);
    expect(channel.sent.map((m) => m.content)).toEqual(['re: @support-agent is the shop open?']);
    const runs = await store.getRuns({ messageId: turn.id });
    expect(runs.map((run) => [run.agentId, run.status])).toEqual([['support-agent', 'answered']]);
  });

  it('stores and answers a turn received twice once', async () => {
    // given a running bot that has received a turn
    const channel = new MemoryChannel();
    const agent = await start([channel]);
    const turn = channel.turn('@support-agent hello');
    await (
      await bot!.receive(turn)
    ).handled;

    // when the same turn is received again
    await (
      await bot!.receive(turn)
    ).handled;

    // then it is stored once and answered once
    expect(agent.runs.map((m) => m.id)).toEqual([turn.id]);
    expect(channel.sent).toHaveLength(1);
    expect((await store.get(turn.conversationId)).filter((t) => t.id === turn.id)).toHaveLength(1);
  });

  it('answers on the channel it is given', async () => {
    // given a bot on two channels of the same platform type
    const [first, second] = [new MemoryChannel(), new MemoryChannel({ channelId: 'other' })];
    await start([first, second]);
    const turn = second.turn('@support-agent which channel?');

    // when a turn is received for the second
    await (
      await bot!.receive(turn, second)
    ).handled;

    // then the answer goes out there
    expect(first.sent).toEqual([]);
    expect(second.sent.map((m) => m.content)).toEqual(['re: @support-agent which channel?']);
  });

  it('refuses a turn before start, and one for a channel the bot does not have', async () => {
    // given a bot not started yet
    const channel = new MemoryChannel();
    bot = new Bot({ channels: [channel], agents: [], store, logger: silentLogger });
    const turn = channel.turn('hello');

    // then a turn is refused as not committed
    await expect(bot.receive(turn)).rejects.toBeInstanceOf(StoreError);

    // and once started, a turn of a platform the bot has no channel for is refused
    await bot.start();
    const stranger = new MemoryChannel({ type: 'console' });
    await expect(bot.receive(stranger.turn('hello'))).rejects.toThrow(ColloquyError);
    await expect(bot.receive(turn, stranger)).rejects.toThrow(
      'the bot has no console channel to answer on',
    );
    expect(await store.get(turn.conversationId)).toEqual([]);
  });
});
