import { describe, expect, it } from 'vitest';
import { Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import { StoreError } from 'colloquy';
import type { ChannelHandlers, ConversationStore, NewMessage } from 'colloquy';
import { MemoryChannel } from 'colloquy/testing';
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

  it('works on a custom store without a run ledger, whose append resolves to nothing', async () => {
    // given a store written to the seed interface, that knows no turn to edit or delete
    const turns: NewMessage[] = [];
    const store = {
      append: async (message: NewMessage) => void turns.push(message),
      get: async () => [],
      search: async () => [],
      deleteMessages: async () => 0,
      recordEdit: async () => false,
      recordDeletion: async () => false,
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

describe('Bot: how an answered turn is committed', () => {
  it('commits the run answered with the confirmation of its reply, or unconfirmed when that fails', async () => {
    // given a store that records the operations of each commit
    const store = new InMemoryConversationStore();
    const batches: string[][] = [];
    const commit = store.commit.bind(store);
    let failConfirm = false;
    store.commit = (ops) => {
      batches.push(ops.map((op) => (op.kind === 'run' ? `run ${op.run.status}` : op.kind)));
      if (failConfirm && ops.some((op) => op.kind === 'confirm')) {
        return Promise.resolve(
          ops.map((op) =>
            op.kind === 'confirm'
              ? { ok: false as const, error: new StoreError('disk full', { transient: false }) }
              : { ok: true as const, value: undefined },
          ),
        );
      }
      return commit(ops);
    };
    const channel = new MemoryChannel();
    const agent = scriptedAgent('support-agent', () => 'done');
    const bot = new Bot({ channels: [channel], agents: [agent], store, logger: silentLogger });
    await bot.start();

    // when a turn is answered
    await channel.receive('@support-agent hi');
    await bot.idle();

    // then the confirmation and the run answered share the last commit
    expect(batches.at(-1)).toEqual(['confirm', 'run answered']);
    expect(batches.flat().filter((op) => op.startsWith('run'))).toEqual([
      'run pending',
      'run running',
      'run running',
      'run answered',
    ]);

    // and when the confirmation cannot be committed, the run ends unconfirmed after it
    failConfirm = true;
    await channel.receive('@support-agent again');
    await bot.idle();
    const [run] = await store.getRuns!({ statuses: ['unconfirmed'] });
    expect(run).toMatchObject({ agentId: 'support-agent', status: 'unconfirmed' });
    expect(batches.at(-1)).toEqual(['run unconfirmed']);
    await bot.stop();
  });

  it("goes on to the conversation's next turn while a reply's confirmation commits, and counts the turn handled after it", async () => {
    // given a store that holds the commit confirming the first reply
    const store = new InMemoryConversationStore();
    const batches: string[][] = [];
    const confirming = deferred<void>();
    const release = deferred<void>();
    const firstReply = 'memory:room:in-1:support-agent:reply';
    const commit = store.commit.bind(store);
    store.commit = async (ops) => {
      batches.push(ops.map((op) => (op.kind === 'run' ? `run ${op.run.status}` : op.kind)));
      if (ops.some((op) => op.kind === 'confirm' && op.confirmation.id === firstReply)) {
        confirming.resolve();
        await release.promise;
      }
      return commit(ops);
    };
    const secondAsked = deferred<void>();
    const agent = scriptedAgent('support-agent', (message) => {
      if (message.content.includes('4712')) secondAsked.resolve();
      return `about ${message.content.slice(-5)}`;
    });
    const channel = new MemoryChannel();
    const bot = new Bot({ channels: [channel], agents: [agent], store, logger: silentLogger });
    await bot.start();

    // when a person asks twice in a row
    const first = await channel.deliver('@support-agent where is 4711?');
    const second = await channel.deliver('@support-agent and 4712?');
    let firstHandled = false;
    void first.handled.then(() => (firstHandled = true));

    // then the agent takes the second question while the first reply's confirmation is held
    await confirming.promise;
    await secondAsked.promise;
    expect(channel.sent.map((m) => m.content)).toEqual(['about 4711?']);
    // and the first turn is not handled until that confirmation is committed
    await new Promise((resolve) => setImmediate(resolve));
    expect(firstHandled).toBe(false);
    release.resolve();
    await first.handled;
    await second.handled;

    // and the second reply's record waited behind it, committed in the next batch
    const held = batches.findIndex((ops) => ops.includes('confirm'));
    expect(batches[held + 1]).toEqual(expect.arrayContaining(['run running', 'reply']));
    expect(channel.sent.map((m) => m.content)).toEqual(['about 4711?', 'about 4712?']);
    const replies = (await store.get(channel.conversationId)).filter(
      (turn) => turn.participant.id === 'support-agent',
    );
    expect(replies.map((turn) => turn.delivery)).toEqual(['sent', 'sent']);
    expect((await store.getRuns!({ statuses: ['answered'] })).length).toBe(2);
    await bot.stop();
  });
});
