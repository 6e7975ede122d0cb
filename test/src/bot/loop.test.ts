import { describe, expect, it } from 'vitest';
import { Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import { MemoryChannel } from 'colloquy/testing';
import { recordingLogger, scriptedAgent } from './bot.fixtures.js';

const carol = { kind: 'user' as const, id: 'memory:carol', displayName: 'Carol' };

function pingPong(maxAgentDepth?: number) {
  const store = new InMemoryConversationStore();
  const channel = new MemoryChannel();
  const logger = recordingLogger();
  const ping = scriptedAgent('ping', (m, ctx) => `@pong ping ${ctx.depth}`);
  const pong = scriptedAgent('pong', (m, ctx) => `@ping pong ${ctx.depth}`);
  const bot = new Bot({ channels: [channel], agents: [ping, pong], store, logger, maxAgentDepth });
  return { store, channel, logger, ping, pong, bot };
}

describe('agents answering agents', () => {
  it('hands a reply that mentions another agent to it, and stops after maxAgentDepth agent turns', async () => {
    // given two agents that always mention each other
    const { bot, channel, store, logger } = pingPong();
    await bot.start();

    // when a person starts them off
    await channel.receive('@ping start', { from: carol });
    await bot.stop();

    // then five agent turns follow, each one deeper, and the guard says why it stopped
    expect(channel.sent.map((m) => m.content)).toEqual([
      '@pong ping 0',
      '@ping pong 1',
      '@pong ping 2',
      '@ping pong 3',
      '@pong ping 4',
    ]);
    expect(logger.lines.filter((l) => l.msg.startsWith('loop guard'))).toHaveLength(1);

    // and every turn is stored exactly once
    const turns = await store.get(channel.conversationId);
    expect(turns).toHaveLength(6);
    expect(new Set(turns.map((t) => t.id)).size).toBe(6);
    expect(turns[2]?.metadata).toMatchObject({ mentions: ['ping'], replyToParticipantId: 'ping' });
  });

  it('takes maxAgentDepth from the options', async () => {
    const { bot, channel } = pingPong(2);
    await bot.start();
    await channel.receive('@ping start', { from: carol });
    await bot.stop();
    expect(channel.sent.map((m) => m.content)).toEqual(['@pong ping 0', '@ping pong 1']);
  });

  it('does not hand a reply on when it mentions no other agent', async () => {
    // given two agents in a DM, where every turn concerns both
    const store = new InMemoryConversationStore();
    const channel = new MemoryChannel({ scope: 'dm' });
    const a = scriptedAgent('a', () => 'from a');
    const b = scriptedAgent('b', () => 'from b');
    const bot = new Bot({ channels: [channel], agents: [a, b], store, logger: silentLogger });
    await bot.start();

    // when a person writes
    await channel.receive('hello both', { from: carol });
    await bot.stop();

    // then each answers the person once, and neither answers the other
    expect(channel.sent.map((m) => m.content)).toEqual(['from a', 'from b']);
    expect([a.runs.length, b.runs.length]).toEqual([1, 1]);
  });

  it('stops answering another bot once the conversation ends in maxAgentDepth agent turns', async () => {
    // given our agent answering bots, and another bot (on another platform) that always answers back
    const store = new InMemoryConversationStore();
    const channel = new MemoryChannel();
    const logger = recordingLogger();
    const ours = scriptedAgent('support-agent', () => 'hello @relay-bot');
    const bot = new Bot({
      channels: [channel],
      agents: [ours],
      store,
      logger,
      answerBots: true,
      maxAgentDepth: 4,
    });
    await bot.start();
    const relay = { kind: 'agent' as const, id: 'memory:relay', displayName: 'relay-bot' };

    // when the other bot keeps writing to our agent
    for (let i = 0; i < 6; i++) await channel.receive(`@support-agent relay ${i}`, { from: relay });

    // then ours stops once four agent turns in a row would be exceeded
    expect(ours.runs.map((m) => m.content)).toEqual([
      '@support-agent relay 0',
      '@support-agent relay 1',
    ]);

    // and a person's turn starts a fresh run
    await channel.receive('@support-agent are you there?', { from: carol });
    await channel.receive('@support-agent relay 6', { from: relay });
    await bot.stop();
    expect(ours.runs.map((m) => m.content).slice(2)).toEqual([
      '@support-agent are you there?',
      '@support-agent relay 6',
    ]);
    expect(logger.lines.some((l) => l.msg.startsWith('loop guard'))).toBe(true);
    expect(await store.get(channel.conversationId)).toHaveLength(12);
  });

  it('counts agent turns across the tool rows of agents that call many tools a turn', async () => {
    // given our agent answering bots, recording ten tool calls (twenty rows) per answer
    const store = new InMemoryConversationStore();
    const channel = new MemoryChannel();
    const ours = scriptedAgent('support-agent', async (message, ctx) => {
      for (let call = 0; call < 10; call++) {
        for (const toolRole of ['call', 'result']) {
          await ctx.record({
            ...message,
            id: `${message.id}:tool:0:call_${call}:${toolRole}`,
            participant: { kind: 'agent', id: 'support-agent' },
            content: '{}',
            metadata: { ...message.metadata, messageId: undefined, mentions: [], toolRole },
          });
        }
      }
      return 'hello @relay-bot';
    });
    const bot = new Bot({
      channels: [channel],
      agents: [ours],
      store,
      logger: silentLogger,
      answerBots: true,
      maxAgentDepth: 5,
    });
    await bot.start();
    const relay = { kind: 'agent' as const, id: 'memory:relay', displayName: 'relay-bot' };

    // when another bot keeps writing to it
    for (let i = 0; i < 6; i++) await channel.receive(`@support-agent relay ${i}`, { from: relay });
    await bot.stop();

    // then it stops after as many agent turns as without tool rows
    expect(ours.runs.map((m) => m.content)).toEqual([
      '@support-agent relay 0',
      '@support-agent relay 1',
    ]);
  });
});
