import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Bot, StoreError, silentLogger } from 'colloquy';
import type {
  CaptureOptions,
  ColloquyError,
  ConversationStore,
  Logger,
  NewMessage,
} from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { MemoryChannel } from 'colloquy/testing';
import type { CommitResult, StoreOperation } from '../../../src/store.js';
import { recordingLogger, runningOn, scriptedAgent } from './bot.fixtures.js';

/**
 * A store whose commit loses the first batch holding an op `losing` picks, as Postgres loses
 * a transaction it picks as a deadlock's victim.
 */
function losingOnce(store: SqliteConversationStore, losing: (op: StoreOperation) => boolean) {
  const lost: string[] = [];
  const commit = async (ops: readonly StoreOperation[]): Promise<CommitResult[]> => {
    const op = lost.length === 0 ? ops.find(losing) : undefined;
    if (op === undefined) return store.commit(ops);
    lost.push(op.kind);
    const error = new StoreError(`cannot store ${op.kind}: 40P01: deadlock detected`, {
      transient: true,
    });
    return ops.map(() => ({ ok: false, error }));
  };
  return { store: replacing(store, { commit }), lost };
}

/** `store` with the methods in `methods` replaced. */
function replacing(store: SqliteConversationStore, methods: Partial<ConversationStore>) {
  return new Proxy(store, {
    get: (target, key) => {
      if (Object.hasOwn(methods, key)) return methods[key as keyof ConversationStore];
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A store whose reads of one turn fail, as during a connection blip, while `failing` is set. */
function failingReads(store: SqliteConversationStore, transient: boolean) {
  const reads = { failing: true, failed: 0 };
  const getMessage: ConversationStore['getMessage'] = async (conversationId, id) => {
    if (!reads.failing) return store.getMessage(conversationId, id);
    reads.failed++;
    throw new StoreError('cannot read a turn: SQLITE_BUSY: database is locked', { transient });
  };
  return { store: replacing(store, { getMessage }), reads };
}

/** A store whose reads of the unfinished runs fail, as during a connection blip, while `failing` is set. */
function failingRunReads(store: SqliteConversationStore) {
  const reads = { failing: true, failed: 0 };
  const getRuns: ConversationStore['getRuns'] = async (filter) => {
    if (!reads.failing) return store.getRuns(filter);
    reads.failed++;
    throw new StoreError('cannot read runs: SQLITE_BUSY: database is locked', { transient: true });
  };
  return { store: replacing(store, { getRuns }), reads };
}

describe('a run meets a passing store failure', () => {
  let dir: string;
  let file: SqliteConversationStore;
  let bot: Bot | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'colloquy-passing-'));
    file = new SqliteConversationStore({ path: join(dir, 'colloquy.db') });
  });
  afterEach(async () => {
    await bot?.stop();
    await file.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const row = (sql: string, ...params: unknown[]) =>
    file.db.prepare(sql).get(...params) as Record<string, unknown> | undefined;

  it.each([
    ['the run starting', 'run', (op: StoreOperation) => op.kind === 'run' && op.create !== true],
    ['the reply record', 'reply', (op: StoreOperation) => op.kind === 'reply'],
    ['the confirmation', 'confirm', (op: StoreOperation) => op.kind === 'confirm'],
  ])(
    'waits for %s to be committed on a retry, then answers once and records it answered',
    async (_what, kind, losing) => {
      // given a bot whose store loses one commit holding that op
      const { store, lost } = losingOnce(file, losing);
      const channel = new MemoryChannel();
      bot = new Bot({
        channels: [channel],
        agents: [scriptedAgent('support-agent', () => 'on it')],
        store,
        logger: silentLogger,
        capture: { retryBaseMs: 5 },
      });
      await bot.start();

      // when a person asks
      const turn = await channel.receive('@support-agent where is 4711?');
      await bot.idle();
      await bot.settled();

      // then the lost commit was retried, and the person has one answer, recorded as sent
      expect(lost).toEqual([kind]);
      expect(channel.sent.map((sent) => sent.content)).toEqual(['on it']);
      expect(row('SELECT status, error FROM agent_runs WHERE message_id = ?', turn.id)).toEqual({
        status: 'answered',
        error: null,
      });
      expect(
        row('SELECT delivery FROM messages WHERE id = ?', `${turn.id}:support-agent:reply`),
      ).toEqual({ delivery: 'sent' });
    },
  );

  /** The reply a crash left recorded to `turn`, its delivery not confirmed. */
  function replyTo(turn: NewMessage): NewMessage {
    const { messageId: _, ...place } = turn.metadata;
    return {
      ...turn,
      id: `${turn.id}:support-agent:reply`,
      content: 'maybe sent',
      metadata: place,
    };
  }

  /** What a crash leaves: `turn` recorded, its run running, and its reply `sending` if given. */
  async function crashed(turn: NewMessage, reply?: NewMessage) {
    const run = runningOn(turn, reply === undefined ? {} : { replyId: reply.id });
    const participant = { kind: 'agent' as const, id: 'support-agent' };
    await file.commit([
      { kind: 'append', message: turn },
      ...(reply === undefined
        ? []
        : [{ kind: 'reply' as const, message: { ...reply, participant } }]),
      { kind: 'run', run },
    ]);
  }

  /**
   * Starts a bot on `store` that sends a crash's unconfirmed replies again, and lets it drain.
   * `capture`: its retry backoff, which a read left for later waits out too.
   */
  async function restart(
    channel: MemoryChannel,
    store: ConversationStore,
    capture: CaptureOptions = {},
    answer: (turn: NewMessage) => string = () => 'resumed answer',
    logger: Logger = silentLogger,
  ) {
    const errors: ColloquyError[] = [];
    bot = new Bot({
      channels: [channel],
      agents: [scriptedAgent('support-agent', answer)],
      store,
      unconfirmedReplies: 'resend',
      logger,
      capture,
    });
    bot.catch((error) => void errors.push(error));
    await bot.start();
    await bot.idle();
    await bot.settled();
    return errors;
  }

  it('leaves a run pending when its turn cannot be read for a passing reason, and resumes it on the next drain', async () => {
    // given a crash that left a run unfinished, and a store whose reads of the turn fail for now
    const channel = new MemoryChannel();
    const turn = channel.turn('@support-agent where is 4711?');
    await crashed(turn);
    const { store, reads } = failingReads(file, true);

    // when the bot starts during the blip
    const errors = await restart(channel, store);

    // then the failed read is reported and the run is left as it was, nothing sent
    const status = () => row('SELECT status FROM agent_runs WHERE message_id = ?', turn.id);
    expect(status()).toEqual({ status: 'running' });
    expect(reads.failed).toBeGreaterThan(0);
    expect(errors.map((error) => error.name)).toContain('StoreError');
    expect(channel.sent).toEqual([]);

    // and once reads pass, the next start resumes and answers it
    await bot!.stop();
    reads.failing = false;
    await restart(channel, store);
    expect(channel.sent.map((sent) => sent.content)).toEqual(['resumed answer']);
    expect(status()).toEqual({ status: 'answered' });
  });

  it('fails a run whose turn the store can never read, with why', async () => {
    // given a crash that left a run unfinished, and a store that refuses the turn for good
    const channel = new MemoryChannel();
    const turn = channel.turn('@support-agent where is 4711?');
    await crashed(turn);
    const { store } = failingReads(file, false);

    // when the bot starts
    await restart(channel, store);

    // then the run ends failed, with the store's reason
    expect(row('SELECT status, error FROM agent_runs WHERE message_id = ?', turn.id)).toEqual({
      status: 'failed',
      error: 'cannot resume: cannot read a turn: SQLITE_BUSY: database is locked',
    });
  });

  it('leaves a reply sending when it cannot be read for a passing reason, and settles it on the next drain', async () => {
    // given a crash that left a reply sending, and a store whose reads of it fail for now
    const channel = new MemoryChannel();
    const turn = channel.turn('@support-agent where is 4711?');
    const reply = replyTo(turn);
    await crashed(turn, reply);
    const { store, reads } = failingReads(file, true);

    // when the bot starts during the blip
    await restart(channel, store);

    // then the reply and its run are left as they were, nothing sent
    expect(reads.failed).toBeGreaterThan(0);
    expect(channel.sent).toEqual([]);
    const status = () => row('SELECT status FROM agent_runs WHERE message_id = ?', turn.id);
    const delivery = () => row('SELECT delivery FROM messages WHERE id = ?', reply.id);
    expect(status()).toEqual({ status: 'running' });
    expect(delivery()).toEqual({ delivery: 'sending' });

    // and once reads pass, the next start sends it again and confirms it
    await bot!.stop();
    reads.failing = false;
    await restart(channel, store);
    expect(channel.sent.map((sent) => sent.content)).toEqual(['maybe sent']);
    expect(status()).toEqual({ status: 'answered' });
    expect(delivery()).toEqual({ delivery: 'sent' });
  });

  it('resumes a run its turn could not be read for while the bot runs, once the read passes', async () => {
    // given a crash that left a run unfinished, and a bot started while reads of its turn fail
    const channel = new MemoryChannel();
    const turn = channel.turn('@support-agent where is 4711?');
    await crashed(turn);
    const { store, reads } = failingReads(file, true);
    await restart(channel, store, { retryBaseMs: 5, retryMaxMs: 20 });
    const status = () => row('SELECT status FROM agent_runs WHERE message_id = ?', turn.id);
    expect(status()).toEqual({ status: 'running' });

    // when the read keeps failing for a while, then passes, the bot running all along
    const atStart = reads.failed;
    await vi.waitFor(() => expect(reads.failed).toBeGreaterThan(atStart + 2));
    reads.failing = false;

    // then the run is resumed and answered once, without a restart or a new turn
    await vi.waitFor(() => expect(status()).toEqual({ status: 'answered' }));
    await bot!.idle();
    expect(channel.sent.map((sent) => sent.content)).toEqual(['resumed answer']);
  });

  it('settles a reply it could not read while the bot runs, once the read passes', async () => {
    // given a crash that left a reply sending, and a bot started while reads of it fail
    const channel = new MemoryChannel();
    const turn = channel.turn('@support-agent where is 4711?');
    const reply = replyTo(turn);
    await crashed(turn, reply);
    const { store, reads } = failingReads(file, true);
    await restart(channel, store, { retryBaseMs: 5, retryMaxMs: 20 });
    expect(channel.sent).toEqual([]);

    // when the read passes, the bot running all along
    reads.failing = false;

    // then the reply is sent again once and confirmed, its run answered
    const status = () => row('SELECT status FROM agent_runs WHERE message_id = ?', turn.id);
    await vi.waitFor(() => expect(status()).toEqual({ status: 'answered' }));
    await bot!.idle();
    await bot!.settled();
    expect(channel.sent.map((sent) => sent.content)).toEqual(['maybe sent']);
    expect(row('SELECT delivery FROM messages WHERE id = ?', reply.id)).toEqual({
      delivery: 'sent',
    });
  });

  it('answers a run a passing read failure left before a later turn of its conversation', async () => {
    // given a run left by a failed read at start, with its retry far off
    const channel = new MemoryChannel();
    const turn = channel.turn('@support-agent where is 4711?');
    await crashed(turn);
    const { store, reads } = failingReads(file, true);
    const capture = { retryBaseMs: 60_000, retryMaxMs: 60_000 };
    await restart(channel, store, capture, (t) => `answer to ${t.content}`);

    // when the read passes and the person asks again in the same conversation
    reads.failing = false;
    await channel.receive('@support-agent and 4712?');
    await bot!.idle();
    await bot!.settled();

    // then the turn left is answered first, then the later one
    expect(channel.sent.map((sent) => sent.content)).toEqual([
      'answer to @support-agent where is 4711?',
      'answer to @support-agent and 4712?',
    ]);
    const status = row('SELECT status FROM agent_runs WHERE message_id = ?', turn.id);
    expect(status).toEqual({ status: 'answered' });
  });

  it('reads the unfinished runs again while the bot runs when recovery could not read them', async () => {
    // given a crash that left a run unfinished, and a bot started while reads of runs fail
    const channel = new MemoryChannel();
    const turn = channel.turn('@support-agent where is 4711?');
    await crashed(turn);
    const { store, reads } = failingRunReads(file);
    const errors = await restart(channel, store, { retryBaseMs: 5, retryMaxMs: 20 });
    expect(errors.map((error) => error.message)).toContain(
      'could not read the unfinished agent runs',
    );

    // when the reads pass, the bot running all along
    await vi.waitFor(() => expect(reads.failed).toBeGreaterThan(2));
    reads.failing = false;

    // then recovery reads them and the run is answered
    const status = () => row('SELECT status FROM agent_runs WHERE message_id = ?', turn.id);
    await vi.waitFor(() => expect(status()).toEqual({ status: 'answered' }));
    await bot!.idle();
    expect(channel.sent.map((sent) => sent.content)).toEqual(['resumed answer']);
  });

  it('retries nothing once the bot stops', async () => {
    // given a bot whose reads of a crashed turn keep failing, retried while it runs
    const channel = new MemoryChannel();
    await crashed(channel.turn('@support-agent where is 4711?'));
    const { store, reads } = failingReads(file, true);
    await restart(channel, store, { retryBaseMs: 5, retryMaxMs: 20 });
    await vi.waitFor(() => expect(reads.failed).toBeGreaterThan(1));

    // when it stops
    await bot!.stop();
    const atStop = reads.failed;
    await new Promise((resolve) => setTimeout(resolve, 100));

    // then no retry reads the store after
    expect(reads.failed).toBe(atStop);
  });

  it.each([
    ['its turn', false, 'could not read turn'],
    ['its reply', true, 'could not read reply'],
  ])(
    'reports a read of %s that keeps failing once, and says once when it passes',
    async (_what, withReply, read) => {
      // given a crash that left a run unfinished (its reply sending, or none)
      const channel = new MemoryChannel();
      const turn = channel.turn('@support-agent where is 4711?');
      await crashed(turn, withReply ? replyTo(turn) : undefined);
      const { store, reads } = failingReads(file, true);
      const logger = recordingLogger();
      const capture = { retryBaseMs: 1, retryMaxMs: 2 };

      // when the bot runs while the read fails many times over, then passes
      const errors = await restart(channel, store, capture, undefined, logger);
      await vi.waitFor(() => expect(reads.failed).toBeGreaterThan(20));
      reads.failing = false;
      const status = () => row('SELECT status FROM agent_runs WHERE message_id = ?', turn.id);
      await vi.waitFor(() => expect(status()).toEqual({ status: 'answered' }));
      await bot!.idle();

      // then the failure was reported once, and its passing told once
      expect(errors.filter((error) => error.message.startsWith(read))).toHaveLength(1);
      const again = logger.lines.filter((line) => line.msg.startsWith('the store reads again'));
      expect(again).toEqual([{ level: 'info', msg: expect.any(String) }]);
    },
  );

  it('reports a read of the unfinished runs that keeps failing once, and says once when it passes', async () => {
    // given a crash that left a run unfinished, and a bot started while reads of runs fail
    const channel = new MemoryChannel();
    const turn = channel.turn('@support-agent where is 4711?');
    await crashed(turn);
    const { store, reads } = failingRunReads(file);
    const logger = recordingLogger();
    const capture = { retryBaseMs: 1, retryMaxMs: 2 };
    const errors = await restart(channel, store, capture, undefined, logger);

    // when the reads fail many times over, then pass
    await vi.waitFor(() => expect(reads.failed).toBeGreaterThan(20));
    reads.failing = false;
    const status = () => row('SELECT status FROM agent_runs WHERE message_id = ?', turn.id);
    await vi.waitFor(() => expect(status()).toEqual({ status: 'answered' }));

    // then the failure was reported once, and its passing told once
    const unread = errors.filter((e) => e.message === 'could not read the unfinished agent runs');
    expect(unread).toHaveLength(1);
    const again = logger.lines.filter((line) => line.msg.includes('read again'));
    expect(again).toEqual([{ level: 'info', msg: 'the unfinished agent runs are read again' }]);
  });
});
