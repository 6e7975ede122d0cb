import { describe, expect, it } from 'vitest';
import { Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import type { ChannelHandlers, ConversationStore, NewMessage } from 'colloquy';
import { MemoryChannel } from '../src/testing/index.js';
import { deferred, scriptedAgent } from './bot.fixtures.js';

/** A MemoryChannel that hands a turn over and keeps the handler's promise (commit only). */
class CommitChannel extends MemoryChannel {
  handlers!: ChannelHandlers;
  override async start(handlers: ChannelHandlers): Promise<void> {
    this.handlers = handlers;
    await super.start(handlers);
  }
}

describe('Bot: a channel handler resolves once the turn is committed', () => {
  it('resolves only after the commit, and before the agent has answered', async () => {
    // given a store whose commits wait for a gate, and an agent that waits for another
    const store = new InMemoryConversationStore();
    const gate = deferred<void>();
    const append = store.append.bind(store);
    store.append = async (message) => {
      await gate.promise;
      return append(message);
    };
    const answer = deferred<void>();
    const agent = scriptedAgent('support-agent', async () => {
      await answer.promise;
      return 'done';
    });
    const channel = new CommitChannel();
    const bot = new Bot({ channels: [channel], agents: [agent], store, logger: silentLogger });
    await bot.start();

    // when a turn is handed over
    let committed = false;
    const handed = channel.handlers
      .message(channel.turn('@support-agent hi'))
      .then(() => (committed = true));
    await new Promise((resolve) => setImmediate(resolve));

    // then the handler waits for the commit
    expect(committed).toBe(false);
    gate.resolve();
    await handed;
    // and once it resolved, the turn is in the store and the agent has not answered yet
    expect((await store.get(channel.conversationId)).map((m) => m.content)).toEqual([
      '@support-agent hi',
    ]);
    expect(channel.sent).toEqual([]);
    answer.resolve();
    await bot.idle();
    expect(channel.sent.map((m) => m.content)).toEqual(['done']);
    await bot.stop();
  });

  it('works on a custom store with only the seed calls, whose append resolves to nothing', async () => {
    // given a store written to the seed interface
    const turns: NewMessage[] = [];
    const store = {
      append: async (message: NewMessage) => void turns.push(message),
      get: async () => [],
      search: async () => [],
      deleteMessages: async () => 0,
    } as unknown as ConversationStore;
    const channel = new MemoryChannel();
    const agent = scriptedAgent('support-agent', () => 'hello');
    const bot = new Bot({ channels: [channel], agents: [agent], store, logger: silentLogger });
    await bot.start();

    // when a person writes, edits and deletes
    const turn = await channel.receive('@support-agent hi');
    await channel.edit(turn.metadata.messageId!, '@support-agent hi there');
    await channel.delete(turn.metadata.messageId!);
    await bot.stop();

    // then the turn was answered and both turns were appended; nothing crashed
    expect(channel.sent.map((m) => m.content)).toEqual(['hello']);
    expect(turns.map((m) => m.content)).toEqual(['@support-agent hi', 'hello']);
  });
});
