import type { Chat, User } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot } from 'colloquy';
import { FakeTelegram } from 'colloquy/testing';
import { GatedAgent } from '../../fixtures/gated-agent.js';
import { startTelegramBot } from './telegram.fixtures.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const adaDm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };
const forum: Chat = { id: -1009876543210, type: 'supergroup', title: 'Support', is_forum: true };

describe('typing on Telegram (grammy against FakeTelegram)', () => {
  let telegram: FakeTelegram;
  let agent: GatedAgent;
  let bot: Bot;

  beforeEach(async () => {
    telegram = await FakeTelegram.start();
    agent = new GatedAgent('Order 4711 ships tomorrow.');
    ({ bot } = await startTelegramBot(telegram, { agents: [agent] }));
  });

  afterEach(async () => {
    agent.release();
    await bot.stop();
    await telegram.close();
  });

  it('shows "typing" in the chat while the agent works, and the reply follows', async () => {
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'where is my order?' });
    await agent.started;
    const [typing] = await telegram.waitForCall('sendChatAction');
    expect(typing?.payload).toEqual({ chat_id: 1001, action: 'typing' });
    agent.release();
    const [reply] = await telegram.waitForSent(1);
    expect(reply?.text).toBe('Order 4711 ships tomorrow.');
  });

  it('shows it in the forum topic the reply goes to', async () => {
    const mention = `@${telegram.botInfo.username}`;
    telegram.sendUserMessage({
      chat: forum,
      from: ada,
      text: `${mention} refund?`,
      message_thread_id: 42,
    });
    await agent.started;
    const [typing] = await telegram.waitForCall('sendChatAction');
    expect(typing?.payload).toMatchObject({
      chat_id: forum.id,
      action: 'typing',
      message_thread_id: 42,
    });
  });
});
