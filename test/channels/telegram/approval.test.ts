import type { Chat, User } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot } from 'colloquy';
import { FakeTelegram } from 'colloquy/testing';
import { ApprovalScene } from '../../agents/approval.fixtures.js';
import { startTelegramBot } from './telegram.fixtures.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const grace: User = { id: 1002, is_bot: false, first_name: 'Grace' };
const group: Chat = { id: -1001234567890, type: 'supergroup', title: 'Orders Team' };

describe('tool approval on Telegram (grammy against FakeTelegram)', () => {
  let telegram: FakeTelegram;
  let scene: ApprovalScene;
  let bot: Bot;

  async function startBot() {
    ({ bot } = await startTelegramBot(telegram, scene.open()));
  }

  async function restart() {
    await bot.stop();
    await scene.store.close();
    await startBot();
  }

  async function asked() {
    const mention = `@${telegram.botInfo.username}`;
    telegram.sendUserMessage({ chat: group, from: ada, text: `${mention} refund order 4242` });
    const [prompt] = await telegram.waitForSent(1);
    await bot.idle();
    return prompt!;
  }

  beforeEach(async () => {
    scene = new ApprovalScene();
    telegram = await FakeTelegram.start();
    await startBot();
  });

  afterEach(async () => {
    await bot?.stop();
    await telegram.close();
    await scene.close();
  });

  it('asks with Approve / Deny and runs the tool on Approve after a restart', async () => {
    const prompt = await asked();
    expect(prompt.text).toBe('May I run refund_order {"orderId":"4242"}?');
    const keys = prompt.message.reply_markup?.inline_keyboard.flat().map((b) => b.text);
    expect(keys).toEqual(['Approve', 'Deny']);
    expect(scene.refunds).toEqual([]);

    await restart();
    const approve = prompt.message.reply_markup!.inline_keyboard[0]![0]!;
    telegram.pressButton(prompt.message, ada, (approve as { callback_data: string }).callback_data);
    const [, done] = await telegram.waitForSent(2);
    await bot.idle();

    expect(done!.text).toBe('Done: {"refunded":"4242"}');
    expect(scene.refunds).toEqual(['4242']);
    const rows = await scene.store.get(`telegram:${group.id}`, { participantIds: ['billing'] });
    // Oldest first by time: a reply's time is Telegram's (whole seconds), a tool row's the agent's.
    expect(rows.map((r) => [r.metadata.toolRole, r.content])).toHaveLength(4);
    expect(rows.map((r) => [r.metadata.toolRole, r.content])).toEqual(
      expect.arrayContaining([
        ['call', '{"orderId":"4242"}'],
        [undefined, 'May I run refund_order {"orderId":"4242"}?'],
        ['result', '{"refunded":"4242"}'],
        [undefined, 'Done: {"refunded":"4242"}'],
      ]),
    );
  });

  it('tells the model the call was denied on Deny, and runs nothing', async () => {
    const prompt = await asked();
    await restart();
    const deny = prompt.message.reply_markup!.inline_keyboard[0]![1]!;
    telegram.pressButton(prompt.message, ada, (deny as { callback_data: string }).callback_data);
    const [, done] = await telegram.waitForSent(2);
    await bot.idle();

    expect(done!.text).toBe('Not refunded (denied by Ada).');
    expect(scene.refunds).toEqual([]);
    const rows = await scene.store.get(`telegram:${group.id}`, { participantIds: ['billing'] });
    expect(rows.find((r) => r.metadata.toolRole === 'result')?.content).toBe('Denied by Ada.');
  });

  it('refuses a press by someone other than the person asked, and still waits', async () => {
    const prompt = await asked();
    const approve = prompt.message.reply_markup!.inline_keyboard[0]![0]!;
    const data = (approve as { callback_data: string }).callback_data;
    telegram.pressButton(prompt.message, grace, data);
    const [, refused] = await telegram.waitForSent(2);
    await bot.idle();
    expect(refused!.text).toBe('Those buttons are for the person the message answered.');
    expect(scene.refunds).toEqual([]);

    telegram.pressButton(prompt.message, ada, data);
    const [, , done] = await telegram.waitForSent(3);
    await bot.idle();
    expect(done!.text).toBe('Done: {"refunded":"4242"}');
    expect(scene.refunds).toEqual(['4242']);
  });
});
