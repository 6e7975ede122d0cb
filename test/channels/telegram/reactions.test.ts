import type { Chat, User } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot, ColloquyError, Logger } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeTelegram } from 'colloquy/testing';
import { reactionUpdate } from '../../../channels/telegram/fake-reactions.js';
import { watched } from '../../fixtures/watched-store.js';
import { startTelegramBot } from './telegram.fixtures.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const grace: User = { id: 1002, is_bot: false, first_name: 'Grace' };
const group: Chat = { id: -1001234567890, type: 'supergroup', title: 'Orders Team' };
const inGroup = 'telegram:-1001234567890';

describe('reactions on Telegram (grammy against FakeTelegram, SQLite store)', () => {
  let telegram: FakeTelegram;
  let sqlite: SqliteConversationStore;
  let store: ReturnType<typeof watched>;
  let bot: Bot;
  let errors: ColloquyError[];
  let lines: string[];

  beforeEach(async () => {
    telegram = await FakeTelegram.start();
    sqlite = new SqliteConversationStore({ path: ':memory:' });
    store = watched(sqlite);
    lines = [];
    const logger: Logger = {
      debug: () => {},
      info: (msg) => void lines.push(msg),
      warn: (msg) => void lines.push(msg),
      error: (msg) => void lines.push(msg),
    };
    const retry = { baseDelayMs: 5 };
    ({ bot, errors } = await startTelegramBot(telegram, { store: store.store, logger }, { retry }));
  });

  /** Resolves once Telegram counts `count` updates as delivered (each handled first). */
  async function acknowledged(count: number): Promise<void> {
    const polls = () => telegram.calls.filter((call) => call.method === 'getUpdates').length;
    while (telegram.acknowledged.length < count)
      await telegram.waitForCall('getUpdates', polls() + 1);
  }

  afterEach(async () => {
    await bot.stop();
    await telegram.close();
    await sqlite.close();
  });

  it('asks for reactions and records one added, then changed to another', async () => {
    const { message } = telegram.sendUserMessage({ chat: group, from: ada, text: 'order 4711?' });
    const [turn] = await store.turns(inGroup, (t) => t.length === 1);
    await telegram.waitForCall('getUpdates', 2);
    expect(telegram.allowedUpdates).toContain('message_reaction');

    const reactions = () => sqlite.getReactions(inGroup, turn!.id);
    const react = { chat: group, messageId: message.message_id };
    expect(telegram.react({ ...react, from: grace, emoji: ['👍'] })).toBe(true);
    expect(telegram.react({ ...react, from: grace, emoji: ['👎'], before: ['👍'] })).toBe(true);
    await acknowledged(3);
    expect(await reactions()).toMatchObject([
      { participantId: 'telegram:1002', reaction: '👍', removedAt: expect.any(String) },
      { participantId: 'telegram:1002', reaction: '👎' },
    ]);
    expect((await reactions())[1]).not.toHaveProperty('removedAt');
    expect(await store.store.get(inGroup)).toHaveLength(1); // a reaction is not a turn
    expect(errors).toEqual([]);
  });

  it('leaves out a reaction on a message it never saw with one line, and keeps going', async () => {
    await telegram.waitForCall('getUpdates');
    expect(telegram.react({ chat: group, from: grace, messageId: 99999, emoji: ['🔥'] })).toBe(
      true,
    );
    telegram.sendUserMessage({ chat: group, from: ada, text: 'still here' });
    await store.turns(inGroup, (t) => t.length === 1);
    await acknowledged(2);
    expect(lines.filter((line) => line.includes('reaction'))).toEqual([
      `not recorded: reaction 🔥 on a message the store does not have (telegram:${group.id}:99999)`,
    ]);
    expect(errors).toEqual([]);
  });

  it('keeps a reaction taken back and put on again within one second open', async () => {
    // given Grace's 👍 on Ada's message
    const { message } = telegram.sendUserMessage({ chat: group, from: ada, text: 'order 4711?' });
    const [turn] = await store.turns(inGroup, (t) => t.length === 1);
    const react = { chat: group, messageId: message.message_id, from: grace };
    const date = 1_763_800_000;
    telegram.pushUpdate(reactionUpdate({ ...react, emoji: ['👍'] }, date));

    // when she takes it back and puts it on again within the next second (dated alike)
    telegram.pushUpdate(reactionUpdate({ ...react, emoji: [], before: ['👍'] }, date + 1));
    telegram.pushUpdate(reactionUpdate({ ...react, emoji: ['👍'], before: [] }, date + 1));
    await acknowledged(4);

    // then her 👍 is open
    const reactions = await sqlite.getReactions(inGroup, turn!.id);
    expect(reactions.filter((r) => r.removedAt === undefined)).toMatchObject([
      { participantId: 'telegram:1002', reaction: '👍' },
    ]);
    expect(errors).toEqual([]);
  });
});
