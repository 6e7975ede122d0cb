import { describe, expect, it } from 'vitest';
import { Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import type { AppendResult, NewMessage } from 'colloquy';
import { CapturedStore } from '../src/bot/captured-store.js';
import { CaptureWriter } from '../src/capture.js';
import { MemoryChannel } from '../src/testing/index.js';
import { deferred, scriptedAgent } from './bot.fixtures.js';

/** A real in-memory store whose appends wait until `release` (as a slow disk would). */
class HeldStore extends InMemoryConversationStore {
  #gate = deferred();
  held = 0;
  failHas = false;
  /** Calls to `flush`: someone waited for the writes handed over. */
  flushes = 0;

  flush(): void {
    this.flushes++;
  }

  release(): void {
    this.#gate.resolve();
  }

  hold(): void {
    this.#gate = deferred();
  }

  override async append(message: NewMessage): Promise<AppendResult> {
    this.held++;
    await this.#gate.promise;
    return super.append(message);
  }

  override async has(message: NewMessage): Promise<boolean> {
    if (this.failHas) throw new Error('SQLITE_IOERR: disk I/O error');
    return super.has(message);
  }
}

function turn(n: number, id = `telegram:42:${n}`): NewMessage {
  return {
    id,
    conversationId: 'telegram:42',
    participant: { kind: 'user', id: 'telegram:1001', displayName: 'Alice' },
    content: `turn ${n}`,
    timestamp: '2026-01-01T00:00:00.000Z',
    scope: 'dm',
    metadata: { channelType: 'telegram', channelId: '42', messageId: `${n}`, mentions: [] },
  };
}

const ids = async (store: InMemoryConversationStore) =>
  (await store.get('telegram:42')).map((m) => m.id);

/** Lets queued promise callbacks run. */
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('CaptureWriter.accept', () => {
  it('says a turn is new without waiting for its write, which goes on behind', async () => {
    // given a store whose writes are held
    const store = new HeldStore();
    const writer = new CaptureWriter(store, { logger: silentLogger });

    // when a turn is accepted
    expect(await writer.accept(turn(1))).toBe('new');

    // then the answer came before the write, and settled() waits for the write
    let settled = false;
    const done = writer.settled().then(() => (settled = true));
    await tick();
    expect(store.held).toBe(1);
    expect(settled).toBe(false);
    expect(await ids(store)).toEqual([]);
    store.release();
    await done;
    expect(await ids(store)).toEqual(['telegram:42:1']);
    expect(writer.stats).toMatchObject({ stored: 1, duplicates: 0 });
  });

  it('asks the store not to hold back the writes someone waits for', async () => {
    // given a turn being written, and a second one queued behind it
    const store = new HeldStore();
    const writer = new CaptureWriter(store, { logger: silentLogger });
    await writer.accept(turn(1));
    await tick();
    await writer.accept(turn(2));

    // when someone waits for both
    const done = writer.settled();

    // then the store is asked to hand over what it holds now, and again for the second turn
    expect(store.flushes).toBe(1);
    store.release();
    await done;
    expect(store.flushes).toBe(2);
    expect(await ids(store)).toEqual(['telegram:42:1', 'telegram:42:2']);
  });

  it('asks the store not to hold back writes while the bot stops (flush)', async () => {
    // given a turn being written, and a second one queued behind it
    const store = new HeldStore();
    const writer = new CaptureWriter(store, { logger: silentLogger });
    await writer.accept(turn(1));
    await tick();
    await writer.accept(turn(2));

    // when capture is flushed, as Bot.stop does
    const flushed = writer.flush(1000);

    // then the store is asked to hand over what it holds, again for the second turn, and
    // both are written
    expect(store.flushes).toBe(1);
    store.release();
    expect(await flushed).toBe(true);
    expect(store.flushes).toBe(2);
    expect(await ids(store)).toEqual(['telegram:42:1', 'telegram:42:2']);
  });

  it('recognises a retry of a turn still being written, by id or by platform message', async () => {
    // given a turn accepted and not yet written
    const store = new HeldStore();
    const writer = new CaptureWriter(store, { logger: silentLogger });
    expect(await writer.accept(turn(1))).toBe('new');

    // when the platform delivers it again, with the same id and under a new id
    const again = await writer.accept(turn(1));
    const renamed = await writer.accept(turn(1, 'slack-style-new-id'));

    // then both are duplicates and one row is written
    expect([again, renamed]).toEqual(['duplicate', 'duplicate']);
    store.release();
    await writer.settled();
    expect(await ids(store)).toEqual(['telegram:42:1']);
    expect(writer.stats).toMatchObject({ stored: 1, duplicates: 2 });
  });

  it('recognises a turn the store already has, for instance after a restart', async () => {
    // given a turn stored by an earlier run
    const store = new HeldStore();
    store.release();
    await store.append(turn(1));

    // when a new writer (a restarted bot) is handed the platform's redelivery
    const writer = new CaptureWriter(store, { logger: silentLogger });

    // then it is a duplicate and nothing more is written
    expect(await writer.accept(turn(1))).toBe('duplicate');
    await writer.settled();
    expect(await ids(store)).toEqual(['telegram:42:1']);
  });

  it('answers one of two simultaneous deliveries of a turn', async () => {
    const store = new HeldStore();
    const writer = new CaptureWriter(store, { logger: silentLogger });

    // when the same turn arrives twice at once (the store is still looking for the first)
    const both = await Promise.all([writer.accept(turn(1)), writer.accept(turn(1))]);

    // then exactly one is new
    expect(both.sort()).toEqual(['duplicate', 'new']);
    store.release();
    await writer.settled();
    expect(await ids(store)).toEqual(['telegram:42:1']);
  });

  it('takes a turn as new when the store cannot say, and still writes it', async () => {
    // given a store that fails to look turns up
    const store = new HeldStore();
    store.failHas = true;
    store.release();
    const writer = new CaptureWriter(store, { logger: silentLogger });

    // then a turn is answered rather than dropped, and stored
    expect(await writer.accept(turn(1))).toBe('new');
    await writer.settled();
    expect(await ids(store)).toEqual(['telegram:42:1']);
  });

  it('makes new turns wait when the store falls behind, instead of piling them up', async () => {
    // given a store that does not keep up
    const store = new HeldStore();
    const writer = new CaptureWriter(store, { logger: silentLogger });

    // when 600 turns arrive at once
    let answered = 0;
    const all = Array.from({ length: 600 }, (_, i) =>
      writer.accept(turn(i + 1)).then(() => answered++),
    );
    await tick();

    // then only so many are let through until the store catches up, and none is lost
    expect(answered).toBeLessThan(600);
    expect(answered).toBeGreaterThanOrEqual(512);
    store.release();
    await Promise.all(all);
    await writer.settled();
    expect(writer.stats).toMatchObject({ stored: 600, dropped: 0 });
  });

  it('lets settled() resolve while the store fails, instead of waiting for it to recover', async () => {
    // given a store that refuses every write for now
    const store = new InMemoryConversationStore();
    store.append = async () => {
      throw new Error('SQLITE_FULL: database or disk is full');
    };
    const writer = new CaptureWriter(store, { logger: silentLogger, retryBaseMs: 60_000 });

    // when a turn is accepted, then settled() is awaited
    expect(await writer.accept(turn(1))).toBe('new');
    await writer.settled();

    // then the turn is held for retry, not lost, and the reader did not hang
    expect(writer.stats).toMatchObject({ buffered: 1, failures: 1 });
    writer.close();
  });
});

describe('CapturedStore', () => {
  it('reads only after the captures asked for before the read', async () => {
    // given a reply queued on a writer whose store is slow
    const store = new HeldStore();
    const writer = new CaptureWriter(store, { logger: silentLogger });
    void writer.append(turn(1));
    const view = new CapturedStore(store, writer);

    // when the view is read before the write has finished
    const read = view.get('telegram:42');
    await tick();
    store.release();

    // then the read holds the turn
    expect((await read).map((m) => m.id)).toEqual(['telegram:42:1']);
    expect(await view.has?.(turn(1))).toBe(true);
    expect((await view.getMessage?.('telegram:42', 'telegram:42:1'))?.content).toBe('turn 1');
  });
});

describe('a Bot whose store is slow', () => {
  it('answers a turn before its writes finish, and its agents still read them', async () => {
    // given a bot on a store that holds every write until released
    const store = new HeldStore();
    const channel = new MemoryChannel();
    const seen: string[][] = [];
    const agent = scriptedAgent('support-agent', async (message, ctx) => {
      // what a prompt would be built from
      seen.push((await ctx.store.get(message.conversationId)).map((m) => m.content));
      return `re: ${message.content}`;
    });
    const bot = new Bot({ channels: [channel], agents: [agent], store, logger: silentLogger });
    await bot.start();

    // when a person writes, and the agent's read of the store is let through
    const turnDone = channel.receive('@support-agent where is order 42?');
    await tick();
    expect(seen).toEqual([]); // the agent's read waits for the inbound turn's write
    store.release();
    await turnDone;

    // then the agent saw the turn it answered
    expect(seen).toEqual([['@support-agent where is order 42?']]);

    // when the next turn is answered while writes are held again
    store.hold();
    const second = channel.receive('@support-agent thanks!');
    await tick();
    store.release();
    await second;

    // then its prompt held the earlier reply, and bot.store reads everything captured so far
    expect(seen[1]).toEqual([
      '@support-agent where is order 42?',
      're: @support-agent where is order 42?',
      '@support-agent thanks!',
    ]);
    store.hold();
    const replyDone = bot.settled();
    store.release();
    await replyDone;
    expect((await bot.store.get('memory:room')).map((m) => m.content)).toHaveLength(4);
    await bot.stop();
  });
});
