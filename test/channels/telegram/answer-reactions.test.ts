import { join } from 'node:path';
import type { Chat, User } from 'grammy/types';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot, BotOptions, ColloquyError, StoredMessage } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeTelegram } from 'colloquy/testing';
import {
  APOLOGY,
  ANSWER,
  FeedbackAgent,
  expectReactionAnswered,
} from '../../fixtures/feedback-agent.js';
import { userTextIn } from '../../fixtures/file-reading-agent.js';
import { answer } from '../../fixtures/model-answer.js';
import { tempDirs } from '../../fixtures/temp-dirs.js';
import { startTelegramBot } from './telegram.fixtures.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const adaDm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };
const inDm = 'telegram:1001';
const temp = tempDirs();

describe('answerReactions on Telegram (grammy against FakeTelegram, SQLite store)', () => {
  let telegram: FakeTelegram;
  let sqlite: SqliteConversationStore;
  let bot: Bot;
  let errors: ColloquyError[];
  let agent: FeedbackAgent;

  beforeEach(async () => {
    telegram = await FakeTelegram.start();
    sqlite = new SqliteConversationStore({ path: ':memory:' });
    agent = new FeedbackAgent();
  });

  afterEach(async () => {
    await bot.stop();
    await telegram.close();
    await sqlite.close();
  });

  /** A bot with `options` whose agent has answered Ada's question: her turn and the answer's message id. */
  async function answered(options: Partial<BotOptions>) {
    ({ bot, errors } = await startTelegramBot(
      telegram,
      { store: sqlite, agents: [agent], ...options },
      { retry: { baseDelayMs: 5 } },
    ));
    const { message } = telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'refund time?' });
    await telegram.waitForSent(1);
    await bot.idle();
    return { asked: message.message_id, answer: telegram.sent[0]!.message.message_id };
  }

  /** Ada leaves `emoji` on a message (`before`: what she had on it). */
  const react = (messageId: number, emoji: string[], before: string[] = []) =>
    expect(telegram.react({ chat: adaDm, from: ada, messageId, emoji, before })).toBe(true);

  /** Resolves once Telegram counts `count` updates as delivered, and the bot is idle. */
  async function delivered(count: number): Promise<void> {
    const polls = () => telegram.calls.filter((call) => call.method === 'getUpdates').length;
    while (telegram.acknowledged.length < count)
      await telegram.waitForCall('getUpdates', polls() + 1);
    await bot.idle();
  }

  const reactionTurns = async () =>
    (await sqlite.get(inDm)).filter((t: StoredMessage) => t.metadata.reaction !== undefined);

  it('answers a 👎 on the agent’s answer, with the reaction turn and the answer recorded', async () => {
    const { answer } = await answered({ answerReactions: { emoji: ['👎'] } });

    react(answer, ['👎']);
    await telegram.waitForSent(2);
    await delivered(2);

    expect(telegram.sent.map((sent) => sent.text)).toEqual([ANSWER, APOLOGY]);
    const turns = await sqlite.get(inDm);
    expect(turns.map((t) => t.content)).toEqual([
      'refund time?',
      ANSWER,
      expect.any(String),
      APOLOGY,
    ]);
    await expectReactionAnswered(sqlite, inDm, {
      emoji: '👎',
      by: 'telegram:1001',
      displayName: 'Ada',
    });
    expect(errors).toEqual([]);
  });

  it('records and answers a 👎 on the second part of an answer Telegram took in two', async () => {
    // given an answer longer than a Telegram message, posted in two parts
    const long = `${'Refunds take five working days. '.repeat(160)}Ask again anytime.`;
    agent.model = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) =>
        answer(userTextIn(prompt.slice(-1)).includes('[reacted ') ? APOLOGY : long),
    });
    await answered({ answerReactions: { emoji: ['👎'] } });
    await telegram.waitForSent(2);
    await bot.idle();
    const parts = telegram.sent.map((sent) => sent.message.message_id);
    const [, stored] = await sqlite.get(inDm);
    expect(stored!.metadata).toMatchObject({ messageId: String(parts[0]) });
    expect(stored!.metadata.partMessageIds).toEqual([String(parts[1])]);

    // when Ada reacts 👎 on the second part
    react(parts[1]!, ['👎']);
    await telegram.waitForSent(3);
    await delivered(2);

    // then the reaction is on the answer, and the agent answers it
    expect(await sqlite.getReactions(inDm, stored!.id)).toMatchObject([
      { participantId: 'telegram:1001', reaction: '👎' },
    ]);
    const [turn] = await reactionTurns();
    expect(turn?.metadata.reaction).toEqual({
      emoji: '👎',
      messageId: stored!.id,
      agentId: 'support',
    });
    expect(turn?.metadata.replyToMessageId).toBe(String(parts[0]));
    expect(telegram.sent.at(-1)?.text).toBe(APOLOGY);
    expect(errors).toEqual([]);
  });

  it('answers a reaction Telegram delivers twice once', async () => {
    const { answer } = await answered({ answerReactions: true });

    react(answer, ['👎']);
    await delivered(2);
    telegram.pushUpdate(telegram.acknowledged[1]!); // the same update again, as after a restart
    await delivered(3);

    expect(await reactionTurns()).toHaveLength(1);
    expect(telegram.sent.map((sent) => sent.text)).toEqual([ANSWER, APOLOGY]);
    expect(agent.calls).toBe(2);
    expect(errors).toEqual([]);
  });

  it('answers, after a crash, a reaction whose agent the crash stopped', async () => {
    // given a bot killed as its agent starts on a reaction: the file as the crash leaves it
    const dir = temp.make('reaction-crash');
    const file = new SqliteConversationStore({ path: join(dir, 'colloquy.db') });
    const image = join(dir, 'crashed.db');
    const run = agent.run.bind(agent);
    agent.run = async (input, ctx) => {
      if (input.metadata.reaction === undefined) return run(input, ctx);
      file.db.prepare('VACUUM INTO ?').run(image);
      throw new Error('the process died');
    };
    const { answer } = await answered({ store: file, answerReactions: true });
    react(answer, ['👎']);
    await delivered(2);
    await bot.stop();
    await file.close();

    // when a bot starts again on that file
    agent = new FeedbackAgent();
    const crashed = new SqliteConversationStore({ path: image });
    ({ bot, errors } = await startTelegramBot(
      telegram,
      { store: crashed, agents: [agent], answerReactions: true },
      { retry: { baseDelayMs: 5 } },
    ));
    await telegram.waitForSent(2);
    await bot.idle();

    // then it answers the reaction the crash left unanswered, once
    expect(telegram.sent.map((sent) => sent.text)).toEqual([ANSWER, APOLOGY]);
    await expectReactionAnswered(crashed, inDm, {
      emoji: '👎',
      by: 'telegram:1001',
      displayName: 'Ada',
    });
    await bot.stop();
    await crashed.close();
  });

  it('only records a reaction when the option is off', async () => {
    const { answer } = await answered({});

    react(answer, ['👎']);
    await delivered(2);

    expect(await reactionTurns()).toEqual([]);
    expect(telegram.sent).toHaveLength(1);
    const [, stored] = await sqlite.get(inDm);
    expect(await sqlite.getReactions(inDm, stored!.id)).toMatchObject([{ reaction: '👎' }]);
  });

  it('starts no agent for a removal, nor for a reaction on a person’s message', async () => {
    const { asked, answer } = await answered({ answerReactions: true });

    react(answer, [], ['👍']); // a 👍 taken back
    react(asked, ['👎']); // on Ada's own question
    await delivered(3);

    expect(await reactionTurns()).toEqual([]);
    expect(telegram.sent).toHaveLength(1);
    expect(agent.calls).toBe(1);
    expect(errors).toEqual([]);
  });
});
