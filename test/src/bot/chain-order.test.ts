import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Bot, silentLogger } from 'colloquy';
import type { BotOptions, Interceptor, TurnContext } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { MemoryChannel } from 'colloquy/testing';
import { tempDirs } from '../../fixtures/temp-dirs.js';
import { recordingLogger, scriptedAgent } from './bot.fixtures.js';

const temp = tempDirs();

/**
 * The inbound chain, as a user's interceptor sees it: capture, interceptors, interactions, loop
 * guard, dispatch.
 */
describe('the inbound chain', () => {
  const stops: (() => Promise<void>)[] = [];

  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  /** A SQLite store in a file of its own, closed after the test. */
  function sqliteStore(): SqliteConversationStore {
    const store = new SqliteConversationStore({ path: join(temp.make('chain'), 'colloquy.db') });
    stops.push(() => store.close());
    return store;
  }

  /** A started bot on `channel`, stopped after the test (before its store is closed). */
  async function started(channel: MemoryChannel, options: Omit<BotOptions, 'channels'>) {
    const bot = new Bot({ channels: [channel], logger: silentLogger, ...options });
    stops.unshift(() => bot.stop());
    await bot.start();
    return bot;
  }

  it('reaches the interceptors after capture committed the turn with its runs and acknowledged it', async () => {
    // given an interceptor that notes what is stored and answered when the turn reaches it
    const agent = scriptedAgent('support-agent', () => 'on it');
    const channel = new MemoryChannel();
    let acknowledged = false;
    const seen: unknown[] = [];
    const store = sqliteStore();
    const look: Interceptor<TurnContext> = async (ctx, next) => {
      const { conversationId, id } = ctx.message;
      const stored = await store.getMessage(conversationId, id);
      const runs = await store.getRuns({ messageId: id });
      seen.push({
        stored: stored?.content,
        runs: runs.map((run) => `${run.agentId} ${run.status}`),
        acknowledged,
        agentRuns: agent.runs.length,
      });
      await next();
    };
    await started(channel, { agents: [agent], store, interceptors: [look] });

    // when a turn addressed to the agent arrives
    const delivery = channel.deliver('@support-agent where is 4711?');
    void delivery.then(() => (acknowledged = true));
    const { handled } = await delivery;
    await handled;

    // then the interceptor saw the turn committed with its pending run, the delivery
    // acknowledged, and no agent run yet; dispatch ran after it
    expect(seen).toEqual([
      {
        stored: '@support-agent where is 4711?',
        runs: ['support-agent pending'],
        acknowledged: true,
        agentRuns: 0,
      },
    ]);
    expect(channel.sent.map((m) => m.content)).toEqual(['on it']);
  });

  it('runs the interceptors before the loop guard, and the loop guard before dispatch', async () => {
    // given two agents that always mention each other, at most two agent turns deep
    const channel = new MemoryChannel();
    const logger = recordingLogger();
    const ping = scriptedAgent('ping', (_m, ctx) => `@pong ping ${ctx.depth}`);
    const pong = scriptedAgent('pong', (_m, ctx) => `@ping pong ${ctx.depth}`);
    const seen: string[] = [];
    const note: Interceptor<TurnContext> = async (ctx, next) => {
      seen.push(`${ctx.message.content} (depth ${ctx.depth})`);
      await next();
    };
    const bot = await started(channel, {
      agents: [ping, pong],
      store: sqliteStore(),
      interceptors: [note],
      maxAgentDepth: 2,
      logger,
    });

    // when a person starts them off
    await channel.receive('@ping start');
    await bot.stop();

    // then the turn the guard stops passed the interceptor first, and no agent answered it
    expect(seen).toEqual([
      '@ping start (depth 0)',
      '@pong ping 0 (depth 1)',
      '@ping pong 1 (depth 2)',
    ]);
    expect(logger.lines.filter((line) => line.msg.startsWith('loop guard'))).toHaveLength(1);
    expect(channel.sent.map((m) => m.content)).toEqual(['@pong ping 0', '@ping pong 1']);
    expect([ping.runs.length, pong.runs.length]).toEqual([1, 1]);
  });

  it('shows the interceptors every turn: a command with a handler, a refused command, a refused press', async () => {
    // given a command with a handler and an interceptor that notes every turn it sees
    const channel = new MemoryChannel({ scope: 'dm' });
    const seen: string[] = [];
    const note: Interceptor<TurnContext> = async (ctx, next) => {
      seen.push(ctx.message.content);
      await next();
    };
    const bot = await started(channel, {
      agents: [scriptedAgent('support', () => 'hi')],
      store: sqliteStore(),
      commands: [{ name: 'ping', description: 'Ping', handler: () => 'pong' }],
      interceptors: [note],
    });

    // when a person uses the command, an unknown one, a button no message has, then writes
    await channel.receive('/ping', { interaction: { type: 'command', name: 'ping', args: '' } });
    await channel.receive('/nope', { interaction: { type: 'command', name: 'nope', args: '' } });
    await channel.receive('Approve', {
      interaction: { type: 'button', id: 'approve', value: '', on: 'nowhere' },
    });
    await channel.receive('hello');
    await bot.idle();

    // then the interceptor saw all four, and the interactions link answered after it
    expect(seen).toEqual(['/ping', '/nope', 'Approve', 'hello']);
    expect(channel.sent.map((m) => m.content)).toEqual([
      'pong',
      'There is no /nope command; try /ping.',
      'That button is no longer available.',
      'hi',
    ]);
  });

  it('lets an interceptor that does not call next() stop a command handler', async () => {
    // given a gate that lets only staff through, and a command with a handler
    const channel = new MemoryChannel({ scope: 'dm' });
    let handled = 0;
    const staffOnly: Interceptor<TurnContext> = async (ctx, next) => {
      if (ctx.message.participant.id.startsWith('staff')) await next();
    };
    const bot = await started(channel, {
      agents: [scriptedAgent('support', () => 'hi')],
      store: sqliteStore(),
      commands: [{ name: 'ping', description: 'Ping', handler: () => (handled++, 'pong') }],
      interceptors: [staffOnly],
    });

    // when someone who is not staff uses the command, then someone who is
    const ping = { type: 'command' as const, name: 'ping', args: '' };
    await channel.receive('/ping', { interaction: ping });
    const staff = { kind: 'user' as const, id: 'staff:bob', displayName: 'Bob' };
    await channel.receive('/ping', { interaction: ping, from: staff });
    await bot.idle();

    // then the handler ran for the staff member alone
    expect(handled).toBe(1);
    expect(channel.sent.map((m) => m.content)).toEqual(['pong']);
  });
});
