import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Bot, InMemoryConversationStore, PlatformError, silentLogger, StoreError } from 'colloquy';
import type { ColloquyError, Interceptor, StoredMessage, TurnContext } from 'colloquy';
import { MemoryChannel } from 'colloquy/testing';
import { tempDirs } from '../../fixtures/temp-dirs.js';
import { deferred, flakyStore, recordingLogger, scriptedAgent } from './bot.fixtures.js';

const temp = tempDirs();
const bob = { kind: 'user' as const, id: 'memory:bob', displayName: 'Bob' };

function setup(options: Partial<ConstructorParameters<typeof Bot>[0]> = {}) {
  const store = new InMemoryConversationStore();
  const channel = new MemoryChannel();
  const errors: ColloquyError[] = [];
  const logger = recordingLogger();
  const agent = scriptedAgent('support-agent', (m) => `re: ${m.content}`);
  const bot = new Bot({ channels: [channel], agents: [agent], store, logger, ...options });
  bot.catch((error) => void errors.push(error));
  return { store, channel, errors, logger, agent, bot };
}

describe('Bot', () => {
  it('stores an inbound turn even when no agent answers it', async () => {
    // given a group channel and a turn that does not concern the agent
    const { bot, channel, store, agent } = setup();
    await bot.start();

    // when it arrives
    const turn = await channel.receive('anyone up for lunch?', { from: bob });
    await bot.stop();

    // then it is stored and nobody answered
    expect((await store.get(channel.conversationId)).map((t) => t.id)).toEqual([turn.id]);
    expect(agent.runs).toEqual([]);
    expect(channel.sent).toEqual([]);
  });

  it('answers @name mentions and stores the reply as a reply to the turn', async () => {
    // given an agent called support-agent
    const { bot, channel, store } = setup();
    await bot.start();

    // when someone writes @Support-Agent in any case
    const turn = await channel.receive('hi @Support-Agent, where is order 42?', { from: bob });
    await bot.stop();

    // then the turn is stored with the resolved mention, and the reply is posted and stored
    expect(channel.sent).toEqual([
      {
        conversationId: 'memory:room',
        scope: 'channel',
        channelId: 'room',
        replyToMessageId: turn.metadata.messageId,
        content: 're: hi @Support-Agent, where is order 42?',
        replyId: 'memory:room:in-1:support-agent:reply',
      },
    ]);
    const [inbound, reply] = await store.get(channel.conversationId);
    expect(inbound?.metadata.mentions).toEqual(['support-agent']);
    expect(reply).toMatchObject({
      participant: { kind: 'agent', id: 'support-agent', displayName: 'support-agent' },
      metadata: {
        messageId: 'out-2',
        replyToMessageId: turn.metadata.messageId,
        replyToParticipantId: 'memory:bob',
        model: 'scripted',
      },
    });
  });

  it("adds each channel's bot identity to its agents' aliases after start", async () => {
    // given a channel whose bot user is memory:bot (@bot)
    const { bot, channel, agent } = setup();
    await bot.start();

    // when a turn mentions the bot user id (resolved by the channel)
    await channel.receive('<@bot> status?', { from: bob, mentions: ['memory:bot'] });

    // then the agent answered, and knows all its names
    expect(agent.runs).toHaveLength(1);
    expect(bot.aliasesOf(agent)).toEqual(['support-agent', 'memory:bot', 'bot', '@bot']);
    await bot.stop();
  });

  it('records turns from other bots without answering them, unless answerBots', async () => {
    const otherBot = { kind: 'agent' as const, id: 'memory:otherbot', displayName: 'Other' };
    for (const answerBots of [false, true]) {
      // given a bot that does or does not answer other bots
      const { bot, channel, store, agent } = setup({ answerBots });
      await bot.start();

      // when another bot mentions the agent
      await channel.receive('@support-agent ping', { from: otherBot });
      await bot.stop();

      // then the turn is stored either way, and answered only with answerBots
      expect((await store.get(channel.conversationId))[0]?.participant).toEqual(otherBot);
      expect(agent.runs).toHaveLength(answerBots ? 1 : 0);
    }
  });

  it('runs user interceptors after capture, so a filtered turn is still stored', async () => {
    // given an interceptor that drops turns containing "spam"
    const seen: number[] = [];
    const filter: Interceptor<TurnContext> = async (ctx, next) => {
      seen.push(ctx.depth);
      if (!ctx.message.content.includes('spam')) await next();
    };
    const { bot, channel, store, agent } = setup({ interceptors: [filter] });
    await bot.start();

    // when a spam turn and a normal one arrive
    await channel.receive('@support-agent buy spam', { from: bob });
    await channel.receive('@support-agent real question', { from: bob });
    await bot.stop();

    // then both are stored, only the second is answered
    expect(seen).toEqual([0, 0]);
    expect(agent.runs.map((m) => m.content)).toEqual(['@support-agent real question']);
    expect(await store.get(channel.conversationId)).toHaveLength(3);
  });

  it('gives each channel its own agents when agents is a map', async () => {
    // given two channels with one agent each
    const store = new InMemoryConversationStore();
    const sales = new MemoryChannel({ channelId: 'sales', scope: 'dm' });
    const help = new MemoryChannel({ channelId: 'help', scope: 'dm' });
    const seller = scriptedAgent('seller', () => 'buy!');
    const helper = scriptedAgent('helper', () => 'help!');
    const agents = new Map([
      [sales, [seller]],
      [help, [helper]],
    ]);
    const bot = new Bot({ channels: [sales, help], agents, store, logger: silentLogger });
    await bot.start();

    // when a DM arrives on each
    await sales.receive('hello');
    await help.receive('hello');
    await bot.stop();

    // then each channel's own agent answered
    expect(sales.sent.map((m) => m.content)).toEqual(['buy!']);
    expect(help.sent.map((m) => m.content)).toEqual(['help!']);
  });

  it('records edits and deletions, and re-answers an edit only with rerunOnEdit', async () => {
    for (const rerunOnEdit of [false, true]) {
      // given an answered turn
      const { bot, channel, store, agent } = setup({ rerunOnEdit });
      await bot.start();
      const turn = await channel.receive('@support-agent wheer is order 42', { from: bob });

      // when it is edited (the edit delivered twice, as a platform may), and the reply deleted
      await channel.edit(turn.metadata.messageId!, '@support-agent where is order 42');
      await channel.edit(turn.metadata.messageId!, '@support-agent where is order 42');
      await channel.delete('out-2');
      await bot.stop();

      // then the store has the edit and the tombstone
      const turns = await store.get(channel.conversationId, { includeDeleted: true });
      expect(turns[0]).toMatchObject({ content: '@support-agent where is order 42' });
      expect(turns[0]?.editedAt).toBeDefined();
      expect(turns[1]?.deletedAt).toBeDefined();
      // and the agent ran again only when asked to, once for the edit delivered twice
      expect(agent.runs.map((m) => m.content)).toEqual(
        rerunOnEdit
          ? ['@support-agent wheer is order 42', '@support-agent where is order 42']
          : ['@support-agent wheer is order 42'],
      );
    }
  });

  it('answers every edit with rerunOnEdit, also after the platform delivers the turn again', async () => {
    // given an answered turn, edited and answered again
    const { bot, channel } = setup({ rerunOnEdit: true, logger: silentLogger });
    await bot.start();
    const first = { from: bob, messageId: 'm1', timestamp: '2026-11-28T08:00:00.000Z' };
    await channel.receive('@support-agent wheer is order 42', first);
    await channel.edit('m1', '@support-agent where is order 42');

    // when the platform delivers the turn again (a retry of a slow acknowledgement), then it is
    // edited again
    await channel.receive('@support-agent wheer is order 42', first);
    await channel.edit('m1', '@support-agent where is order 43');
    await bot.stop();

    // then each edit has its answer
    expect(channel.sent.map((m) => m.content)).toEqual([
      're: @support-agent wheer is order 42',
      're: @support-agent where is order 42',
      're: @support-agent where is order 43',
    ]);
  });

  it('does not answer again an edit that comes after a later one', async () => {
    // given an answered turn, edited twice with rerunOnEdit
    const { bot, channel, store, agent } = setup({ rerunOnEdit: true });
    await bot.start();
    const turn = await channel.receive('@support-agent wheer is order 42', { from: bob });
    const id = turn.metadata.messageId!;
    await channel.edit(id, '@support-agent where is order 42', '2026-01-01T00:01:00.000Z');
    await channel.edit(id, '@support-agent where is order 43', '2026-01-01T00:02:00.000Z');

    // when the platform delivers the first edit again
    await channel.edit(id, '@support-agent where is order 42', '2026-01-01T00:01:00.000Z');
    await bot.stop();

    // then the turn keeps the later text, and the agent answered each newer text once
    expect((await store.get(channel.conversationId))[0]?.content).toBe(
      '@support-agent where is order 43',
    );
    expect(agent.runs.map((m) => m.content)).toEqual([
      '@support-agent wheer is order 42',
      '@support-agent where is order 42',
      '@support-agent where is order 43',
    ]);
  });
});

describe('Bot errors', () => {
  it('refuses a turn it could not commit, sends nothing unrecorded, and answers it once committed', async () => {
    // given a store that refuses writes
    const store = flakyStore(new InMemoryConversationStore());
    const channel = new MemoryChannel();
    const errors: ColloquyError[] = [];
    const agent = scriptedAgent('support-agent', () => 'still here');
    const bot = new Bot({
      channels: [channel],
      agents: [agent],
      store,
      logger: silentLogger,
      capture: { retryBaseMs: 5, retryMaxMs: 10 },
    });
    bot.catch((error) => void errors.push(error));
    await bot.start();

    // when a turn arrives
    const turn = channel.turn('@support-agent hello?', { from: bob });
    const receiving = channel.receive(turn.content, {
      from: bob,
      messageId: turn.metadata.messageId,
    });

    // then it is not acknowledged (the platform will send it again), nothing is sent that could
    // not be recorded, and the failure is reported
    await expect(receiving).rejects.toMatchObject({ name: 'StoreError', transient: true });
    await bot.settled();
    await new Promise((r) => setTimeout(r, 50)); // capture tries again meanwhile, in vain
    expect(channel.sent).toEqual([]);
    expect(errors[0]).toMatchObject({ name: 'StoreError', transient: true });

    // and when the store recovers, capture commits the turn and it is answered, with no
    // redelivery (Discord sends none); the platform's redelivery is not answered again
    store.failing = false;
    await bot.idle();
    expect(channel.sent.map((m) => m.content)).toEqual(['still here']);
    await channel.receive(turn.content, { from: bob, messageId: turn.metadata.messageId });
    await bot.stop();
    expect(channel.sent.map((m) => m.content)).toEqual(['still here']);
    const turns = await store.get(channel.conversationId);
    expect(turns.map((t) => t.content)).toEqual(['@support-agent hello?', 'still here']);
  });

  it('reports a turn the store can never take, keeps it as a dead letter, and goes on', async () => {
    // given a store that refuses one turn for good
    const { bot, channel, store, errors, agent } = setup();
    const append = store.append.bind(store);
    store.append = (message) =>
      message.content === '@support-agent poison'
        ? Promise.reject(new StoreError('timestamp is not a date', { transient: false }))
        : append(message);
    await bot.start();

    // when it arrives (and is refused: not acknowledged), then another turn twice (a retry)
    await expect(channel.receive('@support-agent poison', { from: bob })).rejects.toMatchObject({
      name: 'StoreError',
      transient: false,
    });
    const next = channel.turn('@support-agent next', { from: bob });
    await channel.receive(next.content, { from: bob, messageId: next.metadata.messageId });
    await channel.receive(next.content, { from: bob, messageId: next.metadata.messageId });
    await bot.stop();

    // then it was reported and kept (and stop said so), and the retry was still recognised
    expect(errors.map((e) => [e.name, (e as StoreError).transient])).toEqual([
      ['StoreError', false],
      ['StoreError', false],
    ]);
    expect(errors[1]?.message).toMatch(/1 writes could not be stored/);
    expect(bot.captureDeadLetters.map((d) => d.reason)).toEqual(['rejected']);
    expect(agent.runs.map((m) => m.content)).toEqual(['@support-agent next']);
  });

  it('reports a failing agent and a refused send, and goes on with the next turn', async () => {
    // given an agent that throws once, and a channel that refuses once
    let calls = 0;
    const { bot, channel, errors } = setup({
      agents: [
        scriptedAgent('support-agent', () => {
          if (++calls === 1) throw new Error('boom');
          return 'fine';
        }),
      ],
    });
    await bot.start();

    // when three turns arrive
    await channel.receive('@support-agent one', { from: bob });
    channel.sendError = new Error('channel_not_found');
    await channel.receive('@support-agent two', { from: bob });
    channel.sendError = undefined;
    await channel.receive('@support-agent three', { from: bob });
    await bot.stop();

    // then both failures were reported with their turn, and the third was answered
    expect(errors.map((e) => [e.name, e.conversationId])).toEqual([
      ['AgentError', 'memory:room'],
      ['AgentError', 'memory:room'],
    ]);
    expect((errors[0]?.cause as Error).message).toBe('boom');
    expect(channel.sent.map((m) => m.content)).toEqual(['fine']);
  });

  it('stores the parts of a split reply that went out, marked partial, before reporting the refusal', async () => {
    // given a channel that posts the first part of a reply, then is refused
    const { bot, channel, store } = setup();
    const refused = new PlatformError('memory', 'refused part 2 of 2');
    channel.sendError = refused;
    channel.partsBeforeError = 1;
    const reported: { error: ColloquyError; stored: Promise<StoredMessage[]> }[] = [];
    bot.catch((error) => void reported.push({ error, stored: store.get(channel.conversationId) }));
    await bot.start();

    // when the agent answers
    await channel.receive('@support-agent tell me everything', { from: bob });
    await bot.stop();

    // then the refusal was reported, and by then the reply was stored with the part that went out
    expect(reported.map((r) => r.error)).toEqual([refused]);
    const [, reply] = await reported[0]!.stored;
    expect(reply).toMatchObject({
      participant: { kind: 'agent', id: 'support-agent' },
      content: 're: @support-agent tell me everything',
      metadata: { messageId: 'out-part-1', partial: true, model: 'scripted' },
    });
  });

  it('sends malformed-event reports from channels to the one handler', async () => {
    const { bot, channel, errors } = setup();
    await bot.start();
    const { MalformedEventError } = await import('colloquy');
    channel.fail(new MalformedEventError('unknown payload'));
    await bot.stop();
    expect(errors.map((e) => e.name)).toEqual(['MalformedEventError']);
  });

  it('logs errors by default and survives a throwing handler', async () => {
    const channel = new MemoryChannel();
    const logger = recordingLogger();
    const agent = scriptedAgent('support-agent', () => Promise.reject(new Error('nope')));
    const store = new InMemoryConversationStore();
    const bot = new Bot({ channels: [channel], agents: [agent], store, logger });
    await bot.start();
    await channel.receive('@support-agent hi', { from: bob });
    bot.catch(() => {
      throw new Error('handler bug');
    });
    await channel.receive('@support-agent again', { from: bob });
    await bot.stop();
    expect(logger.lines.filter((l) => l.level === 'error').map((l) => l.msg)).toEqual([
      expect.stringMatching(/^AgentError: agent support-agent failed: nope/),
      'the error handler threw',
    ]);
  });
});

describe('Bot.stop', () => {
  it('waits for the turn in flight, then captures its reply', async () => {
    // given an agent that is still thinking
    const thinking = deferred<string>();
    const started = deferred();
    const { bot, channel, store } = setup({
      agents: [
        scriptedAgent('support-agent', () => {
          started.resolve();
          return thinking.promise;
        }),
      ],
    });
    await bot.start();
    const turn = channel.receive('@support-agent slow question', { from: bob });
    await started.promise;

    // when the bot is stopped mid-turn
    const stopped = bot.stop();
    thinking.resolve('slow answer');
    await Promise.all([stopped, turn]);

    // then the answer was sent and stored before stop resolved
    expect((await store.get(channel.conversationId)).map((t) => t.content)).toEqual([
      '@support-agent slow question',
      'slow answer',
    ]);
  });

  it('opens and closes the default SQLite store at COLLOQUY_DB', async () => {
    const path = join(temp.make('bot'), 'bot.db');
    const previous = process.env.COLLOQUY_DB;
    process.env.COLLOQUY_DB = path;
    try {
      // given a bot without a store
      const channel = new MemoryChannel({ scope: 'dm' });
      const bot = new Bot({
        channels: [channel],
        agents: [scriptedAgent('support-agent', () => 'hi')],
        logger: silentLogger,
      });
      await bot.start();
      await channel.receive('hello');
      await bot.stop();

      // then the turns are in the SQLite file it opened
      const { SqliteConversationStore } = await import('colloquy/sqlite');
      const store = SqliteConversationStore.open(path);
      expect((await store.get(channel.conversationId)).map((t) => t.content)).toEqual([
        'hello',
        'hi',
      ]);
      await store.close();
    } finally {
      if (previous === undefined) delete process.env.COLLOQUY_DB;
      else process.env.COLLOQUY_DB = previous;
    }
  });
});
