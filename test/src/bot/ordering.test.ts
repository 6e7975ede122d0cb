import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import type {
  ChannelHandlers,
  ColloquyError,
  Interceptor,
  NewMessage,
  StoredMessage,
  TurnContext,
} from 'colloquy';
import { MemoryChannel } from 'colloquy/testing';
import type { ReceiveOptions } from 'colloquy/testing';
import { TurnOrder } from '../../../src/turn-order.js';
import { deferred, scriptedAgent } from './bot.fixtures.js';

/** A MemoryChannel that can also deliver turns in threads of its one platform channel. */
class ThreadedChannel extends MemoryChannel {
  #handlers: ChannelHandlers | undefined;

  override async start(handlers: ChannelHandlers): Promise<void> {
    this.#handlers = handlers;
    await super.start(handlers);
  }

  /** Delivers a turn posted in thread `threadId` (its own conversation, same `channelId`). */
  async receiveInThread(
    threadId: string,
    content: string,
    options: ReceiveOptions = {},
  ): Promise<NewMessage> {
    const turn = this.turn(content, options);
    const message: NewMessage = {
      ...turn,
      conversationId: `${this.conversationId}:${threadId}`,
      scope: 'thread',
      metadata: { ...turn.metadata, threadId },
    };
    await (
      await this.#handlers!.message(message)
    ).handled;
    return message;
  }

  /**
   * Hands a turn over as a channel does that must look something up first: `complete` gives
   * it whole (its author renamed `content` upper-cased) once `lookedUp` resolves.
   */
  handOverIncomplete(content: string, lookedUp: Promise<void>) {
    const turn = this.turn(content);
    const complete = lookedUp.then(() => ({
      ...turn,
      participant: { ...turn.participant, displayName: content.toUpperCase() },
    }));
    const handled = this.#handlers!.message(turn, complete).then((delivery) => delivery.handled);
    return { turn, handled };
  }
}

/**
 * The turns' contents in the order they were committed (`sequence`): an inbound turn as it
 * arrives, a reply as it is sent.
 */
function inCaptureOrder(turns: readonly StoredMessage[]): string[] {
  return [...turns].sort((a, b) => a.sequence! - b.sequence!).map((turn) => turn.content);
}

/**
 * A bot whose agent answers `re: <text>` to every turn (and throws on `boom`); a turn containing `slow` holds the
 * agent until `release` is called. `seen` records, per turn answered, what the store held for
 * its conversation when the agent ran (what a prompt would be assembled from).
 */
function setup(options: { interceptors?: Interceptor<TurnContext>[] } = {}) {
  const store = new InMemoryConversationStore();
  const channel = new ThreadedChannel();
  const errors: ColloquyError[] = [];
  const slowStarted = deferred();
  const slowReleased = deferred();
  const seen = new Map<string, string[]>();
  const agent = scriptedAgent(
    'support-agent',
    async (message, ctx) => {
      if (message.content.includes('boom')) throw new Error('the model is down');
      seen.set(message.content, inCaptureOrder(await ctx.store.get(message.conversationId)));
      if (message.content.includes('slow')) {
        slowStarted.resolve();
        await slowReleased.promise;
      }
      return `re: ${message.content}`;
    },
    { shouldRespond: () => true },
  );
  const bot = new Bot({
    channels: [channel],
    agents: [agent],
    store,
    logger: silentLogger,
    interceptors: options.interceptors ?? [],
  });
  bot.catch((error) => void errors.push(error));
  const replies = () => channel.sent.map((sent) => sent.content);
  const contents = async (conversationId = channel.conversationId) =>
    inCaptureOrder(await store.get(conversationId));
  return {
    store,
    channel,
    errors,
    bot,
    seen,
    replies,
    contents,
    slowStarted: slowStarted.promise,
    release: () => slowReleased.resolve(),
  };
}

/** Lets every callback that can run now run (the in-memory store and agent need no I/O). */
const settle = () => nextMacrotask();

describe('Bot turn order', () => {
  it('answers two turns of one conversation in arrival order when the first is slow', async () => {
    // given a first turn stuck in the agent
    const { bot, channel, seen, replies, contents, slowStarted, release } = setup();
    await bot.start();
    const first = channel.receive('a slow question');
    await slowStarted;

    // when a second turn arrives in the same conversation, and has every chance to run
    const second = channel.receive('a quick question');
    await settle();
    expect(replies()).toEqual([]);

    // then, once the first is answered, the second is answered after it, from a store that
    // already holds the first reply (the second turn itself was committed when it arrived)
    release();
    await Promise.all([first, second]);
    expect(replies()).toEqual(['re: a slow question', 're: a quick question']);
    expect(seen.get('a quick question')).toEqual([
      'a slow question',
      'a quick question',
      're: a slow question',
    ]);
    expect(await contents()).toEqual([
      'a slow question',
      'a quick question',
      're: a slow question',
      're: a quick question',
    ]);
    await bot.stop();
  });

  it('keeps the place of a turn a channel is still completing', async () => {
    // given a turn handed over before its author's name is known
    const { bot, channel, store, replies, contents } = setup();
    await bot.start();
    const lookup = deferred();
    const first = channel.handOverIncomplete('who am i', lookup.promise);

    // when a later turn of its conversation, an edit of it and a turn in a thread (another
    // conversation) arrive meanwhile, each with every chance to go first
    const later = channel.receive('a later question');
    const edited = channel.edit(first.turn.metadata.messageId!, 'who am I');
    const elsewhere = channel.receiveInThread('t1', 'in a thread');
    await elsewhere;
    await settle();

    // then only the other conversation's turn is committed and answered before the name is known
    expect(await contents()).toEqual([]);
    expect(replies()).toEqual(['re: in a thread']);

    // and once it is, the turn goes first, whole, then the edit, then the later turn
    lookup.resolve();
    await Promise.all([first.handled, later, edited]);
    const turns = await store.get(channel.conversationId);
    expect(turns[0]).toMatchObject({
      content: 'who am I',
      participant: { displayName: 'WHO AM I' },
    });
    expect(await contents()).toEqual([
      'who am I',
      'a later question',
      're: who am i',
      're: a later question',
    ]);
    await bot.stop();
  });

  it('answers another conversation of the same channel while one is still pending', async () => {
    // given a turn stuck in the agent in one thread
    const { bot, channel, replies, contents, slowStarted, release } = setup();
    await bot.start();
    const slow = channel.receiveInThread('t1', 'a slow question');
    await slowStarted;

    // when a turn arrives in another thread of the same platform channel
    await channel.receiveInThread('t2', 'a quick question');

    // then it is answered while the first still waits
    expect(replies()).toEqual(['re: a quick question']);

    // and the first is answered once the agent returns
    release();
    await slow;
    expect(replies()).toEqual(['re: a quick question', 're: a slow question']);
    expect(await contents(`${channel.conversationId}:t1`)).toEqual([
      'a slow question',
      're: a slow question',
    ]);
    await bot.stop();
  });

  it('records an edit and a deletion that arrive right after their turn', async () => {
    // given a turn, edited and then another one deleted, each delivered without waiting
    const { bot, channel, store, errors } = setup();
    await bot.start();
    const handled = [
      channel.receive('hello', { messageId: 'm1' }),
      channel.edit('m1', 'hello, edited'),
      channel.receive('oops', { messageId: 'm2' }),
      channel.delete('m2'),
    ];

    // when they are handled
    await Promise.all(handled);
    await bot.stop();

    // then the edit and the deletion were recorded on their turns
    const turns = await store.get(channel.conversationId, { includeDeleted: true });
    const byId = new Map(turns.map((turn) => [turn.metadata.messageId, turn]));
    expect(byId.get('m1')).toMatchObject({ content: 'hello, edited' });
    expect(byId.get('m1')?.editedAt).toBeDefined();
    expect(byId.get('m2')?.deletedAt).toBeDefined();
    expect(errors).toEqual([]);
  });

  it('records the edit of a turn queued behind a slow one, while other threads go on', async () => {
    // given a slow turn in thread t1, and a second turn of t1 queued behind it
    const { bot, channel, store, replies, slowStarted, release } = setup();
    await bot.start();
    const slow = channel.receiveInThread('t1', 'a slow question');
    await slowStarted;
    const queued = channel.receiveInThread('t1', 'second question', { messageId: 'q2' });

    // when that turn is edited (the edit names only the platform channel and message)
    const edited = channel.edit('q2', 'second question, edited');

    // then the edit waits for its turn while another thread is answered
    await channel.receiveInThread('t2', 'a quick question');
    expect(replies()).toEqual(['re: a quick question']);
    release();
    await Promise.all([slow, queued, edited]);
    const [turn] = (await store.get(`${channel.conversationId}:t1`)).filter(
      (t) => t.metadata.messageId === 'q2',
    );
    expect(turn).toMatchObject({ content: 'second question, edited' });
    expect(turn?.editedAt).toBeDefined();
    await bot.stop();
  });

  it('goes on with the next turn of a conversation after a turn that throws', async () => {
    // given an interceptor that throws on one turn, and an agent that throws on another
    const explode: Interceptor<TurnContext> = async (ctx, next) => {
      if (ctx.message.content.includes('crash')) throw new Error('interceptor crashed');
      await next();
    };
    const { bot, channel, errors, replies, contents } = setup({ interceptors: [explode] });
    await bot.start();

    // when both arrive, each followed at once by an ordinary turn
    await Promise.all([
      channel.receive('crash please'),
      channel.receive('still there?'),
      channel.receive('boom please'),
      channel.receive('and now?'),
    ]);
    await bot.stop();

    // then both failures were reported and the turns after them were answered
    expect(errors.map((error) => error.message)).toEqual([
      'turn failed: interceptor crashed',
      'agent support-agent failed: the model is down',
    ]);
    expect(replies()).toEqual(['re: still there?', 're: and now?']);
    expect(await contents()).toEqual([
      'crash please',
      'still there?',
      'boom please',
      'and now?',
      're: still there?',
      're: and now?',
    ]);
  });

  it('waits on stop for the turns queued behind a slow one', async () => {
    // given a slow turn and two turns queued behind it
    const { bot, channel, replies, contents, slowStarted, release } = setup();
    await bot.start();
    void channel.receive('a slow question');
    await slowStarted;
    void channel.receive('the second');
    void channel.receive('the third');

    // when the bot stops and the agent then returns
    const stopped = bot.stop();
    release();
    await stopped;

    // then every queued turn was answered and captured before stop resolved
    expect(replies()).toEqual(['re: a slow question', 're: the second', 're: the third']);
    expect(await contents()).toEqual([
      'a slow question',
      'the second',
      'the third',
      're: a slow question',
      're: the second',
      're: the third',
    ]);
  });
});

describe('TurnOrder', () => {
  it('runs the next work of a key after work that rejects, and reports the rejection', async () => {
    // given a queue whose first work rejects
    const errors: unknown[] = [];
    const order = new TurnOrder((error) => void errors.push(error));
    const turn = (id: string) => new MemoryChannel().turn(id);
    const ran: string[] = [];

    // when a second work is queued behind it
    const failed = order.message(turn('a'), () => Promise.reject(new Error('broken')));
    const next = order.message(turn('b'), async () => void ran.push('b'));

    // then both settle: the rejection reported, the next work run
    await expect(failed).resolves.toBeUndefined();
    await next;
    expect(ran).toEqual(['b']);
    expect(errors).toEqual([new Error('broken')]);
  });

  it('holds a queue only while it has work pending', async () => {
    // given work queued in two conversations and a change of a turn
    const order = new TurnOrder(() => undefined);
    const gate = deferred();
    const first = new MemoryChannel({ channelId: 'a' }).turn('one', { messageId: 'x' });
    const other = new MemoryChannel({ channelId: 'b' }).turn('two');
    const pending = [
      order.message(first, () => gate.promise),
      order.change({ channelType: 'memory', channelId: 'a', messageId: 'x' }, async () => {}),
      order.message(other, async () => {}),
    ];
    expect(order.size).toBe(2);

    // when everything has run
    gate.resolve();
    await Promise.all(pending);

    // then no queue is left
    expect(order.size).toBe(0);
  });
});
