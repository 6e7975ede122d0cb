import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { CaptureWriter, isPermanentStoreFailure, type CaptureOptions } from '../src/capture.js';
import { captureInterceptor, withPartialReply } from '../src/capture-interceptors.js';
import { compose, type Interceptor } from '../src/chain.js';
import type { Channel } from '../src/channel.js';
import type { TurnContext } from '../src/context.js';
import { PlatformError, StoreError } from '../src/errors.js';
import type { Logger } from '../src/logger.js';
import { InMemoryConversationStore } from '../src/memory-store.js';
import type { ConversationStore } from '../src/store.js';
import type { MessageDeletion, MessageEdit, NewMessage, Participant } from '../src/types.js';

/** A real in-memory store behind a switch: down, or failing the next N writes. */
class FlakyStore implements ConversationStore {
  down = false;
  failNext = 0;
  readonly inner = new InMemoryConversationStore();

  #gate(): void {
    if (this.down) throw new Error('SQLITE_BUSY: database is locked');
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('SQLITE_BUSY: database is locked');
    }
  }
  async append(message: NewMessage) {
    this.#gate();
    return this.inner.append(message);
  }
  async recordEdit(edit: MessageEdit) {
    this.#gate();
    return this.inner.recordEdit(edit);
  }
  async recordDeletion(deletion: MessageDeletion) {
    this.#gate();
    return this.inner.recordDeletion(deletion);
  }
  get = this.inner.get.bind(this.inner);
  search = this.inner.search.bind(this.inner);
  deleteMessages = this.inner.deleteMessages.bind(this.inner);
  listConversations = this.inner.listConversations.bind(this.inner);
  getConversation = this.inner.getConversation.bind(this.inner);
  deleteConversation = this.inner.deleteConversation.bind(this.inner);
  forgetParticipant = this.inner.forgetParticipant.bind(this.inner);
  getSummary = this.inner.getSummary.bind(this.inner);
}

/** A logger that keeps its lines, so tests can read what was said. */
function recordingLogger() {
  const lines: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (msg: string, fields?: Record<string, unknown>): void => {
      lines.push({ level, msg, fields });
    };
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
  };
  return { logger, lines };
}

const CONVERSATION = 'telegram:42';
const alice: Participant = { kind: 'user', id: 'telegram:1001', displayName: 'Alice' };
const agent: Participant = { kind: 'agent', id: 'support-agent', displayName: 'Support' };

function turn(n: number, participant = alice): NewMessage {
  return {
    id: `telegram:42:${n}`,
    conversationId: CONVERSATION,
    participant,
    content: `turn ${n}`,
    timestamp: '2026-01-01T00:00:00.000Z',
    scope: 'channel',
    metadata: { channelType: 'telegram', channelId: '42', messageId: `${n}`, mentions: [] },
  };
}

async function contents(store: ConversationStore): Promise<string[]> {
  return (await store.get(CONVERSATION)).map((m) => m.content);
}

function writerFor(store: ConversationStore, options: CaptureOptions = {}) {
  const errors: StoreError[] = [];
  const { logger, lines } = recordingLogger();
  const writer = new CaptureWriter(store, {
    retryBaseMs: 10,
    retryMaxMs: 1000,
    logger,
    onError: (error) => errors.push(error),
    ...options,
  });
  return { writer, errors, lines };
}

describe('CaptureWriter', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes straight through while the store works', async () => {
    const store = new FlakyStore();
    const { writer } = writerFor(store);
    expect(await writer.append(turn(1))).toBe('stored');
    expect(await writer.append({ ...turn(1), id: 'retry-under-new-id' })).toBe('duplicate');
    expect(writer.stats).toEqual({
      stored: 1,
      duplicates: 1,
      failures: 0,
      retries: 0,
      buffered: 0,
      dropped: 0,
      rejected: 0,
    });
  });

  it('loses nothing and keeps order when the store fails three times, then recovers', async () => {
    // given a store that fails its next three writes
    const store = new FlakyStore();
    store.failNext = 3;
    const { writer, errors } = writerFor(store);
    // when turns, an edit and a deletion arrive during the outage
    expect(await writer.append(turn(1))).toBe('buffered');
    expect(await writer.append(turn(2))).toBe('buffered');
    await writer.edit({
      ...ref(1),
      content: 'turn 1 (edited)',
      editedAt: '2026-01-01T00:01:00.000Z',
    });
    await writer.delete({ ...ref(2), deletedAt: '2026-01-01T00:02:00.000Z' });
    expect(await writer.append(turn(3))).toBe('buffered');
    expect(writer.stats.buffered).toBe(5);
    await vi.advanceTimersByTimeAsync(5_000);
    // then everything was applied, in order
    expect(await contents(store)).toEqual(['turn 1 (edited)', 'turn 3']);
    const all = await store.get(CONVERSATION, { includeDeleted: true });
    const sequences = all.map((m) => m.sequence ?? 0);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(all.map((m) => m.content)).toEqual(['turn 1 (edited)', 'turn 2', 'turn 3']);
    expect(writer.stats).toEqual({
      stored: 5,
      duplicates: 0,
      failures: 3,
      retries: 3,
      buffered: 0,
      dropped: 0,
      rejected: 0,
    });
    // and each failed attempt was reported once, with the turn and the cause
    expect(errors).toHaveLength(3);
    expect(errors[0]).toBeInstanceOf(StoreError);
    expect(errors[0]).toMatchObject({ conversationId: CONVERSATION, messageId: turn(1).id });
    expect(String((errors[0]?.cause as Error).message)).toMatch(/SQLITE_BUSY/);
    // and the next turn goes straight through again
    expect(await writer.append(turn(4))).toBe('stored');
  });

  it('queues concurrent appends behind one in flight, in call order', async () => {
    const store = new FlakyStore();
    const { writer } = writerFor(store);
    const outcomes = await Promise.all([1, 2, 3, 4].map((n) => writer.append(turn(n))));
    expect(outcomes).toEqual(['stored', 'stored', 'stored', 'stored']);
    const stored = await store.get(CONVERSATION);
    expect(stored.map((m) => m.content)).toEqual(['turn 1', 'turn 2', 'turn 3', 'turn 4']);
  });

  /** A store that answers only when told, records what it was handed, and may say it writes in order. */
  function heldStore(writesInOrder: boolean) {
    const inner = new InMemoryConversationStore();
    const handed: string[] = [];
    const answers: (() => void)[] = [];
    const store: ConversationStore = Object.assign(Object.create(inner) as ConversationStore, {
      writesInOrder,
      append: async (message: NewMessage) => {
        handed.push(message.id);
        await new Promise<void>((resolve) => answers.push(resolve));
        return inner.append(message);
      },
    });
    return { inner, handed, answers, store };
  }

  /** Turns 1 and 2 on channel 42, with a turn on channels 7 and 8 between them. */
  function fourTurns(writer: CaptureWriter) {
    const elsewhere = (n: number, channelId: string): NewMessage => {
      const base = turn(n);
      return {
        ...base,
        id: `telegram:${channelId}:${n}`,
        conversationId: `telegram:${channelId}`,
        metadata: { ...base.metadata, channelId },
      };
    };
    return Promise.all([
      writer.append(turn(1)),
      writer.append(elsewhere(1, '7')),
      writer.append(turn(2)),
      writer.append(elsewhere(1, '8')),
    ]);
  }

  it("hands different channels' writes to the store together, one channel's one at a time", async () => {
    // given a store that answers only when told and does not promise to write in call order
    const { inner, handed, answers, store } = heldStore(false);
    const { writer } = writerFor(store);

    // when one channel gets two turns and two other channels one each, all at once
    const outcomes = fourTurns(writer);
    await vi.waitFor(() => expect(handed).toHaveLength(2));

    // then the store holds the first turn of each channel up to the second turn of channel 42
    expect(handed).toEqual(['telegram:42:1', 'telegram:7:1']);
    answers.splice(0).forEach((answer) => answer());
    // and the rest follow together once those are answered, channel 42's second turn first
    await vi.waitFor(() => expect(handed).toHaveLength(4));
    expect(handed.slice(2)).toEqual(['telegram:42:2', 'telegram:8:1']);
    answers.splice(0).forEach((answer) => answer());
    expect(await outcomes).toEqual(['stored', 'stored', 'stored', 'stored']);
    expect(await contents(inner)).toEqual(['turn 1', 'turn 2']);
  });

  it('hands a store that writes in call order every waiting write at once, in order', async () => {
    // given a store that answers only when told and applies writes in call order
    const { inner, handed, answers, store } = heldStore(true);
    const { writer } = writerFor(store);

    // when one channel gets two turns and two other channels one each, all at once
    const outcomes = fourTurns(writer);

    // then all four are handed over together, in call order, channel 42's second turn included
    await vi.waitFor(() => expect(handed).toHaveLength(4));
    expect(handed).toEqual(['telegram:42:1', 'telegram:7:1', 'telegram:42:2', 'telegram:8:1']);
    answers.splice(0).forEach((answer) => answer());
    expect(await outcomes).toEqual(['stored', 'stored', 'stored', 'stored']);
    expect(await contents(inner)).toEqual(['turn 1', 'turn 2']);
  });

  it('backs off exponentially with jitter, never waiting longer than retryMaxMs', async () => {
    // given a store that stays down
    const store = new FlakyStore();
    store.down = true;
    const { writer } = writerFor(store, { retryBaseMs: 10, retryMaxMs: 10_000 });
    await writer.append(turn(1));
    // when one second passes: retries wait 5–10, 10–20, 20–40 … ms
    await vi.advanceTimersByTimeAsync(1_000);
    // then six or seven retries happened
    expect(writer.stats.failures).toBeGreaterThanOrEqual(7);
    expect(writer.stats.failures).toBeLessThanOrEqual(8);

    // and with a small cap, every window of retryMaxMs sees a retry
    const capped = writerFor(store, { retryBaseMs: 10, retryMaxMs: 200 }).writer;
    await capped.append(turn(2));
    await vi.advanceTimersByTimeAsync(2_000);
    for (let window = 0; window < 5; window++) {
      const before = capped.stats.failures;
      await vi.advanceTimersByTimeAsync(200);
      expect(capped.stats.failures).toBeGreaterThan(before);
    }
    writer.close();
    capped.close();
  });

  it('drops the oldest held turns when a long outage fills the buffer, and says so loudly', async () => {
    // given a store that is down and a buffer of three
    const store = new FlakyStore();
    store.down = true;
    const { writer, lines } = writerFor(store, { maxBuffer: 3 });
    // when five turns arrive
    for (let n = 1; n <= 5; n++) expect(await writer.append(turn(n))).toBe('buffered');
    await vi.advanceTimersByTimeAsync(10_000);
    // then the two oldest were dropped, counted and logged with their ids
    expect(writer.stats).toMatchObject({ buffered: 3, dropped: 2 });
    const drops = lines.filter((line) => line.level === 'error');
    expect(drops.map((line) => line.fields?.messageId)).toEqual([turn(1).id, turn(2).id]);
    expect(drops[0]?.fields?.conversationId).toBe(CONVERSATION);
    // and when the store comes back, the rest lands in order
    store.down = false;
    expect(await writer.flush()).toBe(true);
    expect(await contents(store)).toEqual(['turn 3', 'turn 4', 'turn 5']);
  });

  it('warns once per failed attempt', async () => {
    const store = new FlakyStore();
    store.failNext = 2;
    const { writer, lines, errors } = writerFor(store);
    await writer.append(turn(1));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(2);
    expect(errors).toHaveLength(2);
  });

  it('flushes on demand, giving up after the timeout while the store stays down', async () => {
    const store = new FlakyStore();
    store.down = true;
    const { writer } = writerFor(store);
    await writer.append(turn(1));
    const flushed = writer.flush(500);
    await vi.advanceTimersByTimeAsync(500);
    expect(await flushed).toBe(false);
    store.down = false;
    expect(await writer.flush()).toBe(true);
    expect(await contents(store)).toEqual(['turn 1']);
  });

  it('stops retrying after close, but a flush still drains', async () => {
    const store = new FlakyStore();
    store.failNext = 1;
    const { writer } = writerFor(store);
    await writer.append(turn(1));
    writer.close();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(writer.stats).toMatchObject({ failures: 1, retries: 0, buffered: 1 });
    expect(await writer.flush()).toBe(true);
    expect(await contents(store)).toEqual(['turn 1']);
  });
});

describe('CaptureWriter and writes that can never succeed', () => {
  /** Metadata the memory store cannot clone (a DataCloneError, every time). */
  const callback = () => 'not data';
  const unclonable = (n: number): NewMessage => ({
    ...turn(n),
    metadata: { ...turn(n).metadata, callback },
  });

  it('moves a write the store rejects for good to the dead letters and goes on', async () => {
    // given a working store, and a turn it can never take
    const store = new InMemoryConversationStore();
    const { writer, errors, lines } = writerFor(store);

    // when that turn and two more arrive
    expect(await writer.append(unclonable(1))).toBe('rejected');
    expect(await writer.append(turn(2))).toBe('stored');
    expect(await writer.append({ ...turn(2), id: 'a-retry' })).toBe('duplicate');

    // then the later turns were written straight through, nothing is held or retried
    expect(await contents(store)).toEqual(['turn 2']);
    expect(writer.stats).toMatchObject({ stored: 1, rejected: 1, buffered: 0, retries: 0 });

    // and the rejected turn is kept, and reported loudly with its ids
    expect(writer.deadLetters).toEqual([
      {
        op: { kind: 'append', message: unclonable(1) },
        reason: 'rejected',
        error: expect.any(StoreError),
        at: expect.any(String),
      },
    ]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      conversationId: CONVERSATION,
      messageId: turn(1).id,
      transient: false,
    });
    expect((errors[0]?.cause as Error).name).toBe('DataCloneError');
    const loud = lines.filter((line) => line.level === 'error');
    expect(loud.map((line) => [line.fields?.conversationId, line.fields?.messageId])).toEqual([
      [CONVERSATION, turn(1).id],
    ]);
  });

  it('rejects an unparseable timestamp and BigInt metadata from SQLite, and stores what follows', async () => {
    // given a SQLite store
    const store = SqliteConversationStore.open(':memory:');
    const { writer, errors } = writerFor(store);

    // when a turn with a bad timestamp, one with a BigInt and a good one arrive
    const outcomes = [
      await writer.append({ ...turn(1), timestamp: 'yesterday-ish' }),
      await writer.append({ ...turn(2), metadata: { ...turn(2).metadata, size: 10n } }),
      await writer.append(turn(3)),
    ];

    // then the first two are rejected, never retried, and the third is stored
    expect(outcomes).toEqual(['rejected', 'rejected', 'stored']);
    expect(await contents(store)).toEqual(['turn 3']);
    expect(writer.deadLetters.map((d) => d.op.kind === 'append' && d.op.message.id)).toEqual([
      turn(1).id,
      turn(2).id,
    ]);
    expect(errors.map((e) => e.transient)).toEqual([false, false]);
    await store.close();
  });

  it('keeps only the newest maxDeadLetters dead letters', async () => {
    const { writer } = writerFor(new InMemoryConversationStore(), { maxDeadLetters: 2 });
    for (let n = 1; n <= 3; n++) await writer.append(unclonable(n));
    expect(writer.stats.rejected).toBe(3);
    expect(writer.deadLetters.map((d) => d.op.kind === 'append' && d.op.message.id)).toEqual([
      turn(2).id,
      turn(3).id,
    ]);
  });

  it('tells passing failures from permanent ones', () => {
    const coded = (code: string) => Object.assign(new Error(code), { code });
    const wrapped = (cause: unknown) => new StoreError('cannot append a turn', { cause });
    // passing: retried
    for (const error of [
      wrapped(coded('SQLITE_BUSY')),
      wrapped(coded('SQLITE_LOCKED_SHAREDCACHE')),
      wrapped(coded('SQLITE_FULL')),
      wrapped(coded('SQLITE_IOERR_WRITE')),
      wrapped(coded('SQLITE_CANTOPEN')),
      new StoreError('cannot append a turn: the store is closed', { transient: true }),
      new Error('SQLITE_BUSY: database is locked'),
      new Error('connection reset'),
    ]) {
      expect(isPermanentStoreFailure(error), String(error)).toBe(false);
    }
    // permanent: dead-lettered
    for (const error of [
      wrapped(coded('SQLITE_CONSTRAINT_UNIQUE')),
      wrapped(coded('SQLITE_MISMATCH')),
      wrapped(new TypeError('Do not know how to serialize a BigInt')),
      new StoreError('timestamp "soon" is not a date', { transient: false }),
      new DOMException('() => 1 could not be cloned.', 'DataCloneError'),
    ]) {
      expect(isPermanentStoreFailure(error), String(error)).toBe(true);
    }
  });

  it('drops the oldest held turns once the held text passes maxBufferBytes', async () => {
    vi.useFakeTimers();
    try {
      // given a store that is down, and room for about two 3,000-character turns
      const store = new FlakyStore();
      store.down = true;
      const { writer, lines } = writerFor(store, { maxBufferBytes: 15_000 });
      const long = (n: number) => ({ ...turn(n), content: `${n}`.repeat(3000) });

      // when four such turns arrive
      for (let n = 1; n <= 4; n++) expect(await writer.append(long(n))).toBe('buffered');

      // then the two oldest were dropped, loudly, and kept as dead letters
      expect(writer.stats).toMatchObject({ buffered: 2, dropped: 2 });
      const drops = lines.filter((line) => line.level === 'error');
      expect(drops.map((line) => line.fields?.messageId)).toEqual([turn(1).id, turn(2).id]);
      expect(writer.deadLetters.map((d) => d.reason)).toEqual(['dropped', 'dropped']);

      // and the rest lands once the store is back
      store.down = false;
      expect(await writer.flush()).toBe(true);
      expect((await store.get(CONVERSATION)).map((m) => m.id)).toEqual([turn(3).id, turn(4).id]);
      writer.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('captureInterceptor', () => {
  function setup(store: ConversationStore, later: Interceptor<TurnContext>) {
    const { writer } = writerFor(store);
    let platformId = 100;
    const ctxFor = (message: NewMessage): TurnContext => ({
      message,
      channel,
      store,
      depth: 0,
      identities: [],
      async send(content, from) {
        platformId++;
        return {
          ...message,
          id: `telegram:42:${platformId}`,
          participant: from,
          content,
          metadata: { ...message.metadata, messageId: `${platformId}` },
        };
      },
    });
    const chain = compose<TurnContext>([captureInterceptor(writer), later]);
    return { writer, run: (message: NewMessage) => chain(ctxFor(message), async () => {}) };
  }

  it('stores the inbound turn before the rest of the chain runs', async () => {
    const store = new InMemoryConversationStore();
    let seen: string[] = [];
    const { run } = setup(store, async (ctx) => {
      seen = (await ctx.store.get(ctx.message.conversationId)).map((m) => m.id);
    });
    await run(turn(1));
    expect(seen).toEqual([turn(1).id]);
  });

  it('stores each reply after it is sent, with the platform message id', async () => {
    const store = new InMemoryConversationStore();
    const { run } = setup(store, async (ctx) => {
      await ctx.send('first reply', agent);
      await ctx.send('second reply', agent);
    });
    await run(turn(1));
    const stored = await store.get(CONVERSATION);
    expect(stored.map((m) => [m.content, m.participant.id, m.metadata.messageId])).toEqual([
      ['turn 1', alice.id, '1'],
      ['first reply', agent.id, '101'],
      ['second reply', agent.id, '102'],
    ]);
  });

  it('does not answer a platform retry twice', async () => {
    const store = new InMemoryConversationStore();
    let answered = 0;
    const { run } = setup(store, async (ctx) => {
      answered++;
      await ctx.send('reply', agent);
    });
    await run(turn(1));
    await run({ ...turn(1), id: 'same-platform-message-new-id' });
    expect(answered).toBe(1);
    expect(await store.get(CONVERSATION)).toHaveLength(2);
  });

  it('still answers a platform retry once after a turn the store rejected for good', async () => {
    // given a turn the store can never take
    const store = new InMemoryConversationStore();
    let answered = 0;
    const { run, writer } = setup(store, async (ctx) => {
      answered++;
      await ctx.send('reply', agent);
    });
    await run({ ...turn(1), metadata: { ...turn(1).metadata, callback: () => 'not data' } });

    // when the next turn is delivered twice
    await run(turn(2));
    await run({ ...turn(2), id: 'same-platform-message-new-id' });

    // then the retry is recognised: the poisoned turn (and its reply, which copied its
    // metadata) did not stop capture
    expect(answered).toBe(2);
    expect(writer.stats).toMatchObject({ rejected: 2, buffered: 0, duplicates: 1 });
  });

  it('stores the parts of a split reply that went out before the send failed', async () => {
    // given a send that posted part one, then failed, marking what went out
    const store = new InMemoryConversationStore();
    const { writer } = writerFor(store);
    const partial = {
      ...turn(7, agent),
      content: 'long reply',
      metadata: { ...turn(7).metadata, partial: true },
    };
    const refused = withPartialReply(new PlatformError('telegram', 'refused part 2'), partial);
    const chain = compose<TurnContext>([
      captureInterceptor(writer),
      async (ctx) => {
        await ctx.send('long reply', agent);
      },
    ]);
    const ctx: TurnContext = {
      message: turn(1),
      channel,
      store,
      depth: 0,
      identities: [],
      send: () => Promise.reject(refused),
    };

    // when the chain runs, the error travels on
    await expect(chain(ctx, async () => {})).rejects.toBe(refused);

    // and the part that went out was stored first
    expect((await store.get(CONVERSATION)).map((m) => [m.content, m.metadata['partial']])).toEqual([
      ['turn 1', undefined],
      ['long reply', true],
    ]);
  });

  it('never makes the chain throw when the store fails, and still answers', async () => {
    vi.useFakeTimers();
    try {
      const store = new FlakyStore();
      store.down = true;
      let answered = 0;
      const { run, writer } = setup(store, async (ctx) => {
        answered++;
        await ctx.send('reply', agent);
      });
      await expect(run(turn(1))).resolves.toBeUndefined();
      expect(answered).toBe(1);
      expect(writer.stats.buffered).toBe(2);
      store.down = false;
      expect(await writer.flush()).toBe(true);
      expect(await contents(store)).toEqual(['turn 1', 'reply']);
    } finally {
      vi.useRealTimers();
    }
  });
});

const channel: Channel = {
  type: 'telegram',
  botIdentity: { id: 'telegram:99', username: 'orders_bot' },
  start: async () => {},
  stop: async () => {},
  send: async () => ({ messageIds: ['1'] }),
};

function ref(n: number) {
  return { channelType: 'telegram', channelId: '42', messageId: `${n}` };
}
