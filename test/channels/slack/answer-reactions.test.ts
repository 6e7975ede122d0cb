import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot, BotOptions, ColloquyError } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeSlack } from 'colloquy/testing';
import { FeedbackAgent, expectReactionAnswered } from '../../fixtures/feedback-agent.js';
import { startSlackBot } from './slack.fixtures.js';

const inGeneral = 'slack:T0FAKE:C0GENERAL';

describe('answerReactions on Slack (Bolt against FakeSlack, SQLite store)', () => {
  let slack: FakeSlack;
  let sqlite: SqliteConversationStore;
  let bot: Bot;
  let errors: ColloquyError[];
  let agent: FeedbackAgent;

  beforeEach(async () => {
    slack = await FakeSlack.start();
    slack.addUser('U0ALICE', 'alice');
    sqlite = new SqliteConversationStore({ path: ':memory:' });
    agent = new FeedbackAgent();
  });

  afterEach(async () => {
    await bot.stop();
    await slack.close();
    await sqlite.close();
  });

  /**
   * A bot with `options` whose agent has answered Alice's mention in a thread of it: her
   * message's ts, the answer's, and the thread's conversation.
   */
  async function answered(options: Partial<BotOptions>) {
    ({ bot, errors } = await startSlackBot(slack, { store: sqlite, agents: [agent], ...options }));
    await slack.mention({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'refund time?' });
    await slack.waitFor(() => slack.posted.length === 1);
    await bot.idle();
    const answer = slack.posted[0]!;
    return {
      asked: answer.thread_ts!,
      answer: answer.ts,
      thread: `${inGeneral}:${answer.thread_ts}`,
    };
  }

  /** Alice's reaction on `ts`; resolves once Slack has its answer and the bot is idle. */
  async function react(
    ts: string,
    reaction: string,
    more: { removed?: boolean; user?: string } = {},
  ) {
    const delivery = await slack.react({
      channel: 'C0GENERAL',
      user: 'U0ALICE',
      ts,
      reaction,
      ...more,
    });
    expect(delivery.status).toBe(200);
    await bot.idle();
    return delivery;
  }

  const reactionTurns = async (thread: string) =>
    (await sqlite.get(thread)).filter((t) => t.metadata.reaction !== undefined);

  it('answers a 👎 on the agent’s answer in its thread, with the reaction turn and the answer recorded', async () => {
    const { answer, thread } = await answered({ answerReactions: { emoji: ['-1', 'thumbsdown'] } });

    await react(answer, '-1');

    expect(slack.posted).toHaveLength(2);
    expect(slack.posted[1]?.thread_ts).toBe(slack.posted[0]?.thread_ts);
    await expectReactionAnswered(sqlite, thread, {
      emoji: '-1',
      shown: ':-1:',
      by: 'slack:U0ALICE',
      displayName: 'alice', // the name Slack gave with her message
    });
    expect(errors).toEqual([]);
  });

  it('answers a reaction Slack delivers again once', async () => {
    const { answer, thread } = await answered({ answerReactions: true });

    const first = await react(answer, '-1');
    const input = { channel: 'C0GENERAL', user: 'U0ALICE', ts: answer, reaction: '-1' };
    const again = await slack.react(input, { retryNum: 1, eventId: first.eventId });
    expect(again.status).toBe(200);
    await bot.idle();

    expect(await reactionTurns(thread)).toHaveLength(1);
    expect(slack.posted).toHaveLength(2);
    expect(agent.calls).toBe(2);
    expect(errors).toEqual([]);
  });

  it('only records a reaction when the option is off', async () => {
    const { answer, thread } = await answered({});

    await react(answer, '-1');

    expect(await reactionTurns(thread)).toEqual([]);
    expect(slack.posted).toHaveLength(1);
    const answerTurn = (await sqlite.get(thread)).find((t) => t.participant.id === 'support');
    expect(await sqlite.getReactions(thread, answerTurn!.id)).toMatchObject([{ reaction: '-1' }]);
  });

  const lookedUp = (user: string) =>
    slack.calls.filter((c) => c.method === 'users.info' && c.params.user === user);

  it('records a new reactor’s reaction without looking them up when the option is off', async () => {
    slack.addUser('U0BOB', 'Bob');
    const { answer, thread } = await answered({});

    await react(answer, '-1', { user: 'U0BOB' });

    const answerTurn = (await sqlite.get(thread)).find((t) => t.participant.id === 'support');
    expect(await sqlite.getReactions(thread, answerTurn!.id)).toMatchObject([
      { participantId: 'slack:U0BOB', reaction: '-1' },
    ]);
    expect(lookedUp('U0BOB')).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('looks a new reactor up only for a reaction on an agent’s message it may answer', async () => {
    slack.addUser('U0BOB', 'Bob');
    const { asked, answer, thread } = await answered({ answerReactions: { emoji: ['-1'] } });

    await react(asked, '-1', { user: 'U0BOB' });
    await react(answer, 'tada', { user: 'U0BOB' });
    expect(lookedUp('U0BOB')).toEqual([]);

    await react(answer, '-1', { user: 'U0BOB' });

    expect(lookedUp('U0BOB')).toHaveLength(1);
    const [turn] = await reactionTurns(thread);
    expect(turn?.participant).toMatchObject({ id: 'slack:U0BOB', displayName: 'Bob' });
    expect(slack.posted).toHaveLength(2);
    expect(errors).toEqual([]);
  });

  it('records another app’s reaction without answering it, and still answers a person’s', async () => {
    slack.addUser('U0CIAPP', { name: 'ci', isBot: true });
    const { answer, thread } = await answered({ answerReactions: true });

    await react(answer, 'white_check_mark', { user: 'U0CIAPP' });

    expect(await reactionTurns(thread)).toEqual([]);
    expect(slack.posted).toHaveLength(1);
    const answerTurn = (await sqlite.get(thread)).find((t) => t.participant.id === 'support');
    expect(await sqlite.getReactions(thread, answerTurn!.id)).toMatchObject([
      { participantId: 'slack:U0CIAPP', reaction: 'white_check_mark' },
    ]);

    await react(answer, '-1');

    expect(await reactionTurns(thread)).toHaveLength(1);
    expect(slack.posted).toHaveLength(2);
    expect(agent.calls).toBe(2);
    expect(errors).toEqual([]);
  });

  it('records a reaction whose reactor Slack cannot look up, and does not answer it', async () => {
    const { answer, thread } = await answered({ answerReactions: true });
    slack.failNext('users.info', { error: 'missing_scope' });

    await react(answer, '-1', { user: 'U0BOB' });

    expect(await reactionTurns(thread)).toEqual([]);
    expect(slack.posted).toHaveLength(1);
    const answerTurn = (await sqlite.get(thread)).find((t) => t.participant.id === 'support');
    expect(await sqlite.getReactions(thread, answerTurn!.id)).toMatchObject([
      { participantId: 'slack:U0BOB', reaction: '-1' },
    ]);
    expect(errors.map((e) => e.message)).toEqual([
      'Slack: cannot tell whether U0BOB is a bot (users.info: An API error occurred: missing_scope): its reaction is recorded as a bot’s, never answered',
    ]);
  });

  it('starts no agent for a removal, the bot’s own reaction, or one on a person’s message', async () => {
    const { asked, answer, thread } = await answered({ answerReactions: true });

    await react(answer, '-1', { removed: true });
    await react(answer, 'eyes', { user: 'U0BOT' });
    await react(asked, '-1');

    expect(await reactionTurns(thread)).toEqual([]);
    expect(await reactionTurns(inGeneral)).toEqual([]);
    expect(slack.posted).toHaveLength(1);
    expect(agent.calls).toBe(1);
    expect(errors).toEqual([]);
  });
});
