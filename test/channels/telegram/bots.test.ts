import { join } from 'node:path';
import type { Chat, User } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Bot, ColloquyError, silentLogger } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';
import { ScriptedAgent } from '../../fixtures/scripted-agent.js';
import { startedBot } from '../../fixtures/started-bot.js';
import { tempDirs } from '../../fixtures/temp-dirs.js';

const temp = tempDirs();
const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const adaDm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };

describe('two Telegram bot tokens (grammy against FakeTelegram, SQLite files)', () => {
  let one: FakeTelegram;
  let two: FakeTelegram;
  let dir: string;
  const running: { stop(): Promise<void> }[] = [];

  beforeEach(async () => {
    one = await FakeTelegram.start();
    two = await FakeTelegram.start({
      token: '7000002:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB',
      bot: { id: 7000002, username: 'second_bot', first_name: 'Second' },
    });
    dir = temp.make('telegram-bots');
  });

  afterEach(async () => {
    for (const bot of running.splice(0)) await bot.stop();
    await Promise.all([one.close(), two.close()]);
  });

  const channelOn = (telegram: FakeTelegram) =>
    new TelegramChannel({
      token: telegram.token,
      client: { apiRoot: telegram.apiRoot },
      pollingTimeoutSeconds: 1,
    });

  it('refuses both in one Bot at start, saying why and what to do, before calling Telegram', async () => {
    // given one Bot with a channel for each token
    const store = new SqliteConversationStore({ path: join(dir, 'bot.db') });
    const bot = new Bot({
      channels: [channelOn(one), channelOn(two)],
      agents: [new ScriptedAgent({ output: 'On it.' })],
      store,
      logger: silentLogger,
    });
    running.push({ stop: () => bot.stop().then(() => store.close()) });

    // when it starts, then it refuses, with one line naming the cause and the way out
    const started = bot.start();
    await expect(started).rejects.toThrow(ColloquyError);
    await expect(started).rejects.toThrow(
      /^a bot takes one telegram channel: a private chat's id is the person's user id for every bot token, .* run each bot token in a Bot of its own, with a store of its own$/,
    );
    expect([...one.calls, ...two.calls]).toEqual([]);
  });

  it('keeps a person’s DMs with both apart, and answers both, with a Bot and a store per token', async () => {
    // given a Bot for each token, each with its own SQLite file
    const stores = ['one.db', 'two.db'].map(
      (file) => new SqliteConversationStore({ path: join(dir, file) }),
    );
    const bots = [];
    for (const [i, telegram] of [one, two].entries()) {
      const store = stores[i]!;
      const agents = [new ScriptedAgent({ output: 'On it.' })];
      const { bot } = await startedBot(channelOn(telegram), { store, agents });
      running.push({ stop: () => bot.stop().then(() => store.close()) });
      bots.push(bot);
    }

    // when Ada writes her first message to each bot (both message_id 1 in her chat id)
    const sent = [
      one.sendUserMessage({ chat: adaDm, from: ada, text: 'my order to bot one' }),
      two.sendUserMessage({ chat: adaDm, from: ada, text: 'my card to bot two' }),
    ];
    await Promise.all([one.waitForSent(1), two.waitForSent(1)]);
    for (const bot of bots) await bot.idle();

    // then each bot stored and answered its own
    expect(sent.map((s) => s.message.message_id)).toEqual([1, 1]);
    const kept = await Promise.all(stores.map((s) => s.get('telegram:1001')));
    expect(kept.map((turns) => turns.map((t) => t.content))).toEqual([
      ['my order to bot one', 'On it.'],
      ['my card to bot two', 'On it.'],
    ]);
    expect([one, two].map((t) => t.sent.map((s) => s.text))).toEqual([['On it.'], ['On it.']]);
  });
});
