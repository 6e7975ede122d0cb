import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { Capture, type CaptureOptions } from '../../src/capture.js';
import { StoreError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { InMemoryConversationStore } from '../../src/memory-store.js';
import type { CommitResult, ConversationStore, StoreOperation } from '../../src/store.js';
import type { MessageDeletion, MessageEdit, NewMessage, Participant } from '../../src/types.js';
import { deferred } from './bot/bot.fixtures.js';

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
  getMessage = this.inner.getMessage.bind(this.inner);
  findMessage = this.inner.findMessage.bind(this.inner);
  findByPlatformRef = this.inner.findByPlatformRef.bind(this.inner);
  recordReaction = this.inner.recordReaction.bind(this.inner);
  getReactions = this.inner.getReactions.bind(this.inner);
  close = this.inner.close.bind(this.inner);
  createConversation = this.inner.createConversation.bind(this.inner);
  updateConversation = this.inner.updateConversation.bind(this.inner);
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

function turn(n: number, participant: Participant = alice): NewMessage {
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

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'colloquy-capture-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function captureFor(store: ConversationStore, options: CaptureOptions = {}) {
  const errors: StoreError[] = [];
  const { logger, lines } = recordingLogger();
  const deadLetterPath = join(dir, 'dead-letter.jsonl');
  const capture = new Capture(store, {
    retryBaseMs: 5,
    retryMaxMs: 20,
    logger,
    deadLetterPath,
    onError: (error) => errors.push(error),
    ...options,
  });
  const deadLetters = () =>
    readFileSync(deadLetterPath, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { op: StoreOperation; reason: string; error: string });
  return { capture, errors, lines, deadLetters };
}

const append = (message: NewMessage) => ({ kind: 'append' as const, message });

/** A store whose `commit` records each batch and waits for `release` when held. */
class BatchingStore extends InMemoryConversationStore {
  batches: number[] = [];
  gate: { promise: Promise<void>; resolve: () => void } | undefined;

  override async commit(ops: readonly StoreOperation[]): Promise<CommitResult[]> {
    this.batches.push(ops.length);
    await this.gate?.promise;
    const results: CommitResult[] = [];
    for (const op of ops) {
      if (op.kind !== 'append') throw new Error('appends only');
      results.push({ ok: true, value: await this.append(op.message) });
    }
    return results;
  }
}

/** Lets queued promise callbacks run. */
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('Capture', () => {
  it('resolves a write with its result once it is committed', async () => {
    const store = new InMemoryConversationStore();
    const { capture } = captureFor(store);
    const result = await capture.write(append(turn(1)));
    expect(result.inserted).toBe(true);
    expect(await contents(store)).toEqual(['turn 1']);
    const again = await capture.write(append(turn(1)));
    expect(again.inserted).toBe(false);
    expect(capture.stats).toMatchObject({ committed: 2, duplicates: 1, waiting: 0 });
  });

  it('hands the store everything waiting whenever no commit is in flight: batches grow with load', async () => {
    // given a store whose first commit is held
    const store = new BatchingStore();
    const { capture } = captureFor(store);
    store.gate = deferred<void>();
    const first = [1, 2].map((n) => capture.write(append(turn(n))));
    await tick();

    // when 50 more writes arrive while that commit is in flight
    const more = Array.from({ length: 50 }, (_, i) => capture.write(append(turn(3 + i))));
    await tick();
    expect(store.batches).toEqual([2]);
    store.gate.resolve();
    await Promise.all([...first, ...more]);

    // then they went to the store together, in order, in one commit
    expect(store.batches).toEqual([2, 50]);
    expect((await contents(store)).slice(0, 4)).toEqual(['turn 1', 'turn 2', 'turn 3', 'turn 4']);
  });

  it('rejects at once on a transient failure, keeps the op queued and commits it later, in order', async () => {
    // given a store that fails the next three writes
    const store = new FlakyStore();
    const { capture, errors } = captureFor(store);
    store.failNext = 3;

    // when three writes are made
    const outcomes = await Promise.allSettled([1, 2, 3].map((n) => capture.write(append(turn(n)))));

    // then each rejects with a transient StoreError naming its turn
    for (const [i, outcome] of outcomes.entries()) {
      expect(outcome.status).toBe('rejected');
      const error = (outcome as PromiseRejectedResult).reason as StoreError;
      expect(error).toBeInstanceOf(StoreError);
      expect(error.transient).toBe(true);
      expect(error.messageId).toBe(turn(i + 1).id);
    }
    expect(errors.length).toBeGreaterThan(0);

    // and when the store recovers, they are committed in order, before later writes
    await capture.write(append(turn(4))).catch(() => undefined);
    expect(await capture.close(5000)).toBe(0);
    expect(await contents(store)).toEqual(['turn 1', 'turn 2', 'turn 3', 'turn 4']);
    expect(capture.stats).toMatchObject({ waiting: 0, deadLettered: 0 });
    expect(capture.stats.retries).toBeGreaterThan(0);
  });

  it('answers writes at once while it backs off, and commits them after the ones before', async () => {
    // given a store that is down, and a first write that failed
    const store = new FlakyStore();
    const { capture } = captureFor(store, { retryBaseMs: 1000, retryMaxMs: 1000 });
    store.down = true;
    await expect(capture.write(append(turn(1)))).rejects.toThrow(StoreError);

    // when more writes come while capture waits to retry
    const later = capture.write(append(turn(2)));

    // then they are answered at once, held for retry
    await expect(later).rejects.toMatchObject({ transient: true });
    expect(capture.stats.waiting).toBe(2);

    // and once the store is back, everything is committed in order
    store.down = false;
    expect(await capture.close(5000)).toBe(0);
    expect(await contents(store)).toEqual(['turn 1', 'turn 2']);
  });

  it('tries a store that stays down at least every second, so it recovers fast', async () => {
    vi.useFakeTimers();
    try {
      // given capture with its default backoff, and a store down for ten minutes
      const store = new FlakyStore();
      const { capture } = captureFor(store, { retryBaseMs: undefined, retryMaxMs: undefined });
      store.down = true;
      const first = capture.write(append(turn(1))).catch((error: unknown) => error);
      await vi.advanceTimersByTimeAsync(10 * 60_000);
      expect(await first).toBeInstanceOf(StoreError);

      // then it kept trying at least every second
      expect(capture.stats.failures).toBeGreaterThanOrEqual(600);

      // and once the store is back, the turn is committed within a second
      store.down = false;
      await vi.advanceTimersByTimeAsync(1000);
      expect(await contents(store)).toEqual(['turn 1']);
      expect(capture.stats.waiting).toBe(0);
      await capture.close(1000);
    } finally {
      vi.useRealTimers();
    }
  });

  it('records edits and deletions in order with the appends', async () => {
    const store = new FlakyStore();
    const { capture } = captureFor(store);
    store.failNext = 1;
    const writes = [
      capture.write(append(turn(1))),
      capture.write({
        kind: 'edit',
        edit: { ...ref(1), content: 'edited', editedAt: '2026-01-01T00:01:00.000Z' },
      }),
      capture.write({
        kind: 'delete',
        deletion: { ...ref(1), deletedAt: '2026-01-01T00:02:00.000Z' },
      }),
    ];
    await Promise.allSettled(writes);
    await capture.close(5000);
    const [stored] = await store.get(CONVERSATION, { includeDeleted: true });
    expect(stored).toMatchObject({ content: 'edited', deletedAt: '2026-01-01T00:02:00.000Z' });
  });

  it('rejects a write the store refuses for good, dead-letters it and goes on', async () => {
    // given a store that refuses turn 2 for good
    const store = new InMemoryConversationStore();
    const refusing: ConversationStore = Object.assign(Object.create(store) as ConversationStore, {
      append: (message: NewMessage) =>
        message.id === turn(2).id
          ? Promise.reject(new StoreError('bad timestamp', { transient: false }))
          : store.append(message),
    });
    const { capture, errors, lines, deadLetters } = captureFor(refusing);

    // when three turns are written
    const outcomes = await Promise.allSettled([1, 2, 3].map((n) => capture.write(append(turn(n)))));

    // then the refused one rejects for good, is kept in the dead-letter file and reported
    // loudly, and the others are stored
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ transient: false });
    expect(await contents(store)).toEqual(['turn 1', 'turn 3']);
    expect(deadLetters()).toEqual([
      expect.objectContaining({ reason: 'rejected', op: append(turn(2)), error: 'bad timestamp' }),
    ]);
    expect(capture.deadLetters).toHaveLength(1);
    expect(errors.map((e) => e.transient)).toEqual([false]);
    expect(lines.filter((l) => l.level === 'error')).toHaveLength(1);
  });

  it('rejects an unparseable timestamp and BigInt metadata from SQLite for good, and stores what follows', async () => {
    const store = SqliteConversationStore.open(':memory:');
    const { capture, deadLetters } = captureFor(store);
    const badTime = { ...turn(1), timestamp: 'yesterday' };
    const badMeta = { ...turn(2), metadata: { ...turn(2).metadata, big: 10n } };
    const outcomes = await Promise.allSettled(
      [badTime, badMeta, turn(3)].map((t) => capture.write(append(t))),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
    expect(deadLetters().map((d) => d.reason)).toEqual(['rejected', 'rejected']);
    expect(await contents(store)).toEqual(['turn 3']);
    await store.close();
  });

  it('keeps what is still unwritten at close in the dead-letter file', async () => {
    // given a store that stays down
    const store = new FlakyStore();
    const { capture, deadLetters } = captureFor(store);
    store.down = true;
    await Promise.allSettled([1, 2].map((n) => capture.write(append(turn(n)))));

    // when capture closes
    const left = await capture.close(50);

    // then both turns are in the file, in order, and later writes are refused
    expect(left).toBe(2);
    expect(
      deadLetters().map((d) => [d.reason, (d.op as { message: NewMessage }).message.id]),
    ).toEqual([
      ['unwritten', turn(1).id],
      ['unwritten', turn(2).id],
    ]);
    await expect(capture.write(append(turn(3)))).rejects.toThrow(/closed/);
  });

  it('tracks an op past a transient failure: committed once it is, rejected once given up', async () => {
    // given a store that fails the next two writes, then one that stays down
    const store = new FlakyStore();
    const { capture } = captureFor(store);
    store.failNext = 2;

    // when an op is tracked
    const { answered, committed } = capture.track(append(turn(1)));

    // then its answer rejects at once and its outcome is the commit that came later
    await expect(answered).rejects.toMatchObject({ transient: true });
    expect((await committed).inserted).toBe(true);
    expect(await contents(store)).toEqual(['turn 1']);

    // and an op still unwritten at close has its outcome rejected
    store.down = true;
    const lost = capture.track(append(turn(2)));
    await expect(lost.answered).rejects.toMatchObject({ transient: true });
    await capture.close(50);
    await expect(lost.committed).rejects.toThrow(/unwritten at stop/);
  });

  it('refuses a write at once when maxBuffer operations wait', async () => {
    const store = new FlakyStore();
    const { capture } = captureFor(store, { maxBuffer: 2, retryBaseMs: 1000 });
    store.down = true;
    await Promise.allSettled([1, 2].map((n) => capture.write(append(turn(n)))));
    await expect(capture.write(append(turn(3)))).rejects.toThrow(/2 operations wait/);
    expect(capture.stats.waiting).toBe(2);
    store.down = false;
    await capture.close(5000);
    expect(await contents(store)).toEqual(['turn 1', 'turn 2']);
  });

  it('lets settled() resolve while the store fails, instead of waiting for it to recover', async () => {
    const store = new FlakyStore();
    const { capture } = captureFor(store, { retryBaseMs: 1000 });
    store.down = true;
    void capture.write(append(turn(1))).catch(() => undefined);
    await capture.settled();
    expect(capture.stats.waiting).toBe(1);
  });
});

describe('Capture with a store written to the seed interface', () => {
  /** append / get / search / deleteMessages only; append resolves to nothing. */
  function seedStore() {
    const appended: NewMessage[] = [];
    const store = {
      append: async (message: NewMessage) => {
        appended.push(message);
      },
      get: async () => [],
      search: async () => [],
      deleteMessages: async () => 0,
      recordEdit: async () => false,
      recordDeletion: async () => false,
    } as unknown as ConversationStore;
    return { store, appended };
  }

  it('appends through the seed call and takes nothing back as stored', async () => {
    const { store, appended } = seedStore();
    const { capture } = captureFor(store);
    const result = await capture.write(append(turn(1)));
    expect(result).toMatchObject({ inserted: true, message: { id: turn(1).id } });
    expect(appended.map((m) => m.id)).toEqual([turn(1).id]);
  });

  it('answers an edit or deletion of a turn the store does not know with false', async () => {
    const { store } = seedStore();
    const { capture } = captureFor(store);
    const edit = { ...ref(1), content: 'x', editedAt: '2026-01-01T00:01:00.000Z' };
    expect(await capture.write({ kind: 'edit', edit })).toBe(false);
    expect(
      await capture.write({ kind: 'delete', deletion: { ...ref(1), deletedAt: edit.editedAt } }),
    ).toBe(false);
  });

  it('takes an append that throws synchronously, or a commit that answers nonsense, as a transient failure', async () => {
    const throwing = {
      ...seedStore().store,
      append: () => {
        throw new Error('boom');
      },
    } as unknown as ConversationStore;
    const nonsense = {
      ...seedStore().store,
      commit: async () => 'ok',
      getRuns: async () => [],
      getState: async () => undefined,
    } as unknown as ConversationStore;
    for (const store of [throwing, nonsense]) {
      const { capture } = captureFor(store, { retryBaseMs: 1000 });
      await expect(capture.write(append(turn(1)))).rejects.toMatchObject({ transient: true });
      expect(await capture.close(0)).toBe(1);
    }
  });
});

function ref(n: number) {
  return { channelType: 'telegram', channelId: '42', messageId: `${n}` };
}
