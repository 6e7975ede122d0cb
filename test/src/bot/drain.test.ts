import { describe, expect, it } from 'vitest';
import { silentLogger } from 'colloquy';
import type { Interceptor, TurnContext } from 'colloquy';
import { MemoryChannel } from 'colloquy/testing';
import { tempSqliteStore } from '../../fixtures/temp-sqlite-store.js';
import { deferred, scriptedAgent } from './bot.fixtures.js';

describe('the drain: one queue of agent work per conversation', () => {
  const temp = tempSqliteStore('drain');

  it('passes every turn through the interceptors in arrival order, addressed or not', async () => {
    // given an agent held on its first answer, and an interceptor that notes every turn
    const held = deferred();
    const agent = scriptedAgent('support-agent', async (message) => {
      if (message.content.endsWith('one')) await held.promise;
      return `re: ${message.content}`;
    });
    const seen: string[] = [];
    const note: Interceptor<TurnContext> = async (ctx, next) => {
      seen.push(ctx.message.content);
      await next();
    };
    const channel = new MemoryChannel();
    await temp.start({
      channels: [channel],
      agents: [agent],
      interceptors: [note],
      logger: silentLogger,
    });

    // when an addressed turn, a turn no agent is addressed by and another addressed turn arrive
    const one = await channel.deliver('@support-agent one');
    const chat = await channel.deliver('lunch?');
    const two = await channel.deliver('@support-agent two');
    held.resolve();
    await Promise.all([one.handled, chat.handled, two.handled]);

    // then each passed the chain once, in order, and the addressed ones were answered in order
    expect(seen).toEqual(['@support-agent one', 'lunch?', '@support-agent two']);
    expect(channel.sent.map((m) => m.content)).toEqual([
      're: @support-agent one',
      're: @support-agent two',
    ]);
  });

  it('answers a turn delivered again while its first delivery is being answered once', async () => {
    // given an agent held on its answer
    const held = deferred();
    const agent = scriptedAgent('support-agent', async () => {
      await held.promise;
      return 'on it';
    });
    const channel = new MemoryChannel();
    const bot = await temp.start({ channels: [channel], agents: [agent], logger: silentLogger });

    // when the platform delivers the same turn twice before the answer goes out
    const first = await channel.deliver('@support-agent still there?', { messageId: '7' });
    const again = await channel.deliver('@support-agent still there?', { messageId: '7' });
    held.resolve();
    await Promise.all([first.handled, again.handled]);
    await bot.settled();

    // then the agent ran once, one reply went out, and its run is answered
    expect(agent.runs).toHaveLength(1);
    expect(channel.sent.map((m) => m.content)).toEqual(['on it']);
    const runs = await temp.store.getRuns({ messageId: first.message.id });
    expect(runs.map((run) => run.status)).toEqual(['answered']);
  });

  it('answers an edit again after the turn it edits', async () => {
    // given a bot that answers edits again, its agent held on the first answer
    const held = deferred();
    const agent = scriptedAgent('support-agent', async (message) => {
      if (message.metadata.rerunForEdit === undefined) await held.promise;
      return `re: ${message.content}`;
    });
    const channel = new MemoryChannel();
    await temp.start({
      channels: [channel],
      agents: [agent],
      rerunOnEdit: true,
      logger: silentLogger,
    });

    // when a turn is edited while its answer is still being written
    const turn = await channel.deliver('@support-agent what is 2+2?', { messageId: '9' });
    const edited = channel.edit('9', '@support-agent what is 3+3?');
    held.resolve();
    await Promise.all([turn.handled, edited]);

    // then the turn is answered first, then its edit
    expect(channel.sent.map((m) => m.content)).toEqual([
      're: @support-agent what is 2+2?',
      're: @support-agent what is 3+3?',
    ]);
  });
});
