import { describe, expect, it } from 'vitest';
import { Bot, StoreError, silentLogger } from 'colloquy';
import type { NewMessage, OutboundMessage, SendOptions, SentMessage } from 'colloquy';
import { MemoryChannel } from 'colloquy/testing';
import { tempSqliteStore } from '../../fixtures/temp-sqlite-store.js';
import type { AgentRun } from '../../../src/runs.js';
import { deferred, runningOn, scriptedAgent } from './bot.fixtures.js';

/** A channel whose sends wait for `release` while `hold` is set, and split long replies in two. */
class HeldChannel extends MemoryChannel {
  hold: { arrived: () => void; released: Promise<void> } | undefined;

  override async send(message: OutboundMessage, options?: SendOptions): Promise<SentMessage> {
    const held = this.hold;
    if (held !== undefined) {
      held.arrived();
      await held.released;
    }
    if (message.content.startsWith('long')) {
      const first = await super.send({ ...message, content: 'part 1' });
      await options?.partPosted?.(first.messageIds);
      const second = await super.send({ ...message, content: 'part 2' });
      return { messageIds: [...first.messageIds, ...second.messageIds] };
    }
    return super.send(message);
  }
}

describe('agent runs and the reply outbox (SQLite)', () => {
  const temp = tempSqliteStore('runs');

  const row = (sql: string, ...params: unknown[]) =>
    temp.store.db.prepare(sql).get(...params) as Record<string, unknown> | undefined;

  /** The support agent's run on `turn` as a crash may leave it: running, recorded now. */
  const runOf = (turn: NewMessage, fields: Partial<AgentRun> = {}) => ({
    kind: 'run' as const,
    run: runningOn(turn, fields),
  });

  async function start(
    channel: MemoryChannel,
    answer = 'on it',
    resumeWithinMs?: number,
    maxRunAttempts?: number,
  ) {
    const agent = scriptedAgent('support-agent', () => answer);
    await temp.start({
      channels: [channel],
      agents: [agent],
      logger: silentLogger,
      ...(resumeWithinMs !== undefined && { resumeWithinMs }),
      ...(maxRunAttempts !== undefined && { maxRunAttempts }),
    });
    return agent;
  }

  it('records the reply as sending while the platform holds it, then confirms it and the run', async () => {
    // given a bot whose channel holds its sends
    const channel = new HeldChannel();
    await start(channel);
    const arrived = deferred();
    const release = deferred();
    channel.hold = { arrived: () => arrived.resolve(), released: release.promise };

    // when a person asks and the send is under way
    const handled = channel.receive('@support-agent where is 4711?');
    await arrived.promise;

    // then the reply's row is already in the file, marked sending, and the run is running
    const turnId = 'memory:room:in-1';
    const replyId = `${turnId}:support-agent:reply`;
    expect(row('SELECT delivery, platform_message_id FROM messages WHERE id = ?', replyId)).toEqual(
      {
        delivery: 'sending',
        platform_message_id: null,
      },
    );
    expect(row('SELECT status, reply_id FROM agent_runs WHERE message_id = ?', turnId)).toEqual({
      status: 'running',
      reply_id: replyId,
    });

    // and once the platform answers, both are confirmed
    release.resolve();
    await handled;
    await temp.bot!.settled();
    expect(row('SELECT delivery, platform_message_id FROM messages WHERE id = ?', replyId)).toEqual(
      {
        delivery: 'sent',
        platform_message_id: 'out-2',
      },
    );
    expect(row('SELECT status, attempts FROM agent_runs WHERE message_id = ?', turnId)).toEqual({
      status: 'answered',
      attempts: 1,
    });
  });

  it.each([
    [true, 'runs the agent again and answers once', ['on it'], 'answered', 2],
    [false, 'ends the run failed', [], 'failed', 1],
  ])(
    'when an agent meets a store failure that passes (%s) before doing anything, %s',
    async (transient, _what, sent, status, runs) => {
      // given an agent whose first read of the store fails, as one during an outage does
      const channel = new MemoryChannel();
      let calls = 0;
      const agent = scriptedAgent('support-agent', () => {
        if (++calls > 1) return 'on it';
        throw new StoreError('cannot read: Connection terminated unexpectedly', { transient });
      });
      const bot = await temp.start({ channels: [channel], agents: [agent], logger: silentLogger });

      // when a person asks
      await channel.receive('@support-agent where is 4711?');
      await bot.settled();

      // then the agent ran again only when the failure may pass, and the run says how it ended
      expect(channel.sent.map((message) => message.content)).toEqual(sent);
      expect(agent.runs).toHaveLength(runs);
      const run = row(
        'SELECT status, attempts FROM agent_runs WHERE message_id = ?',
        'memory:room:in-1',
      );
      expect(run).toEqual({ status, attempts: 1 });
    },
  );

  it('confirms the parts of a split reply one by one', async () => {
    // given a channel that posts a long reply in two parts, held before the second
    const channel = new HeldChannel();
    await start(channel, 'long answer');
    let seenAfterFirst: Record<string, unknown> | undefined;
    const send = channel.send.bind(channel);
    channel.send = async (message, options) =>
      send(message, {
        partPosted: async (ids) => {
          await options?.partPosted?.(ids);
          seenAfterFirst = row(
            'SELECT delivery, platform_message_id FROM messages WHERE participant_id = ?',
            'support-agent',
          );
        },
      });

    // when it answers
    await channel.receive('@support-agent tell me everything');
    await temp.bot!.settled();

    // then the first part was recorded before the second went out, and the whole after
    expect(seenAfterFirst).toEqual({ delivery: 'sending', platform_message_id: 'out-2' });
    const reply = row(
      'SELECT delivery, platform_message_id, metadata FROM messages WHERE participant_id = ?',
      'support-agent',
    );
    expect(reply).toMatchObject({ delivery: 'sent', platform_message_id: 'out-2' });
    expect(JSON.parse(reply!.metadata as string)).toMatchObject({ partMessageIds: ['out-3'] });
  });

  it('after a restart resumes young unfinished runs, expires old ones, and never resends an unconfirmed reply', async () => {
    // given a file left by a crash: three turns with unfinished runs
    const channel = new MemoryChannel();
    const turn = (n: number) => channel.turn(`@support-agent question ${n}`);
    const [young, old, sending] = [turn(1), turn(2), turn(3)];
    const { messageId: _, ...place } = sending.metadata;
    const reply = {
      ...sending,
      id: `${sending.id}:support-agent:reply`,
      content: 'maybe sent',
      metadata: place,
    };
    await temp.store.commit([
      { kind: 'append', message: young },
      { kind: 'append', message: old },
      { kind: 'append', message: sending },
      runOf(young),
      runOf(old, { createdAt: '2020-01-01T00:00:00.000Z' }),
      { kind: 'reply', message: { ...reply, participant: { kind: 'agent', id: 'support-agent' } } },
      runOf(sending, { replyId: reply.id }),
    ]);

    // when the bot starts again
    await start(channel, 'resumed answer', 60_000);
    await temp.bot!.idle();
    await temp.bot!.settled();

    // then the young run is answered once, the old one expired, the unconfirmed one not resent
    expect(channel.sent.map((m) => m.content)).toEqual(['resumed answer']);
    const status = (t: typeof young) =>
      row('SELECT status, attempts FROM agent_runs WHERE message_id = ?', t.id);
    expect(status(young)).toEqual({ status: 'answered', attempts: 2 });
    expect(status(old)).toMatchObject({ status: 'expired' });
    expect(status(sending)).toMatchObject({ status: 'unconfirmed' });
    expect(row('SELECT delivery FROM messages WHERE id = ?', reply.id)).toEqual({
      delivery: 'unconfirmed',
    });
  });

  it('after a restart fails a run the agent was started on maxRunAttempts times instead of resuming it', async () => {
    // given a file left by crashes: two turns whose runs were started twice and three times
    const channel = new MemoryChannel();
    const [twice, thrice] = [
      channel.turn('@support-agent one'),
      channel.turn('@support-agent two'),
    ];
    await temp.store.commit([
      { kind: 'append', message: twice },
      { kind: 'append', message: thrice },
      runOf(twice, { attempts: 2 }),
      runOf(thrice, { attempts: 3 }),
    ]);

    // when the bot starts again with the default of three starts
    const agent = await start(channel, 'resumed answer');
    await temp.bot!.idle();
    await temp.bot!.settled();

    // then the turn started twice is answered on its third start, the other is not taken up
    // again but recorded as failed, with why
    expect(agent.runs.map((m) => m.id)).toEqual([twice.id]);
    expect(channel.sent.map((m) => m.content)).toEqual(['resumed answer']);
    const status = (t: typeof twice) =>
      row('SELECT status, attempts, error FROM agent_runs WHERE message_id = ?', t.id);
    expect(status(twice)).toEqual({ status: 'answered', attempts: 3, error: null });
    expect(status(thrice)).toEqual({
      status: 'failed',
      attempts: 3,
      error:
        'not resumed: the agent was started 3 times on this turn and the bot stopped each time (maxRunAttempts 3)',
    });
  });

  it('resumes a run started three times when maxRunAttempts allows more', async () => {
    // given a turn whose run was started three times
    const channel = new MemoryChannel();
    const turn = channel.turn('@support-agent again');
    await temp.store.commit([{ kind: 'append', message: turn }, runOf(turn, { attempts: 3 })]);

    // when the bot starts with maxRunAttempts 5
    await start(channel, 'fourth time', undefined, 5);
    await temp.bot!.idle();
    await temp.bot!.settled();

    // then it is answered
    expect(channel.sent.map((m) => m.content)).toEqual(['fourth time']);
    expect(row('SELECT status, attempts FROM agent_runs WHERE message_id = ?', turn.id)).toEqual({
      status: 'answered',
      attempts: 4,
    });
  });

  it('fails instead of resuming a redelivered turn whose run was started maxRunAttempts times', async () => {
    // given a running bot, and a turn stored with a run started three times, never finished
    const channel = new MemoryChannel();
    const agent = await start(channel);
    const turn = channel.turn('@support-agent poison?');
    await temp.store.commit([{ kind: 'append', message: turn }, runOf(turn, { attempts: 3 })]);

    // when the platform delivers the turn again
    await channel.receive(turn.content, { messageId: turn.metadata.messageId });
    await temp.bot!.settled();

    // then the agent is not started on it again and the run is recorded as failed
    expect(agent.runs).toHaveLength(0);
    expect(channel.sent).toEqual([]);
    expect(row('SELECT status FROM agent_runs WHERE message_id = ?', turn.id)).toEqual({
      status: 'failed',
    });
  });

  it('refuses a maxRunAttempts that is not a whole number of at least 1', () => {
    for (const maxRunAttempts of [0, 1.5, Number.NaN]) {
      expect(
        () => new Bot({ channels: [], agents: [], store: temp.store, maxRunAttempts }),
      ).toThrow(
        `BotOptions.maxRunAttempts must be a whole number, at least 1, not ${maxRunAttempts}`,
      );
    }
  });

  it('answers a redelivered turn whose run never finished instead of dropping it', async () => {
    // given a running bot, and a turn stored with a pending run it never took up
    const channel = new MemoryChannel();
    const agent = await start(channel);
    const turn = channel.turn('@support-agent still there?');
    await temp.store.commit([
      { kind: 'append', message: turn },
      runOf(turn, { status: 'pending', attempts: 0 }),
    ]);

    // when the platform delivers the turn again
    await channel.receive(turn.content, { messageId: turn.metadata.messageId });
    await temp.bot!.settled();

    // then it is answered, once
    expect(agent.runs).toHaveLength(1);
    expect(channel.sent.map((m) => m.content)).toEqual(['on it']);
    expect(row('SELECT status FROM agent_runs WHERE message_id = ?', turn.id)).toEqual({
      status: 'answered',
    });
  });

  it('records a run for each addressed turn with the model and tokens, and the prompt when asked', async () => {
    // given a bot that records prompts
    const channel = new MemoryChannel();
    const agent = scriptedAgent('support-agent', async (_message, ctx) => {
      ctx.recordPrompt?.({ messages: [{ role: 'user', content: 'hi' }], tokens: 3 });
      return 'hello';
    });
    const bot = await temp.start({
      channels: [channel],
      agents: [agent],
      logger: silentLogger,
      recordPrompts: true,
    });

    // when a person asks, and someone else chats without addressing the bot
    await channel.receive('@support-agent hi');
    await channel.receive('lunch?');
    await bot.settled();

    // then one run was recorded, with what the agent reported
    const runs = temp.store.db.prepare('SELECT * FROM agent_runs').all() as Record<
      string,
      unknown
    >[];
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'answered', model: 'scripted', attempts: 1 });
    expect(JSON.parse(runs[0]!.prompt as string)).toEqual({
      messages: [{ role: 'user', content: 'hi' }],
      tokens: 3,
    });
  });
});
