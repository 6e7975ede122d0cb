import type { Chat, User } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';
import { GatedAgent } from '../../fixtures/gated-agent.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const adaDm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };

describe('a burst of turns in a Telegram DM (grammy against FakeTelegram)', () => {
  let telegram: FakeTelegram;
  let agent: GatedAgent;
  let bot: Bot | undefined;

  beforeEach(async () => {
    telegram = await FakeTelegram.start();
    agent = new GatedAgent('Settings → Password → Reset.');
  });

  afterEach(async () => {
    agent.release();
    await bot?.stop();
    await telegram.close();
  });

  async function startBot(options: Partial<ConstructorParameters<typeof Bot>[0]> = {}) {
    const channel = new TelegramChannel({
      token: telegram.token,
      client: { apiRoot: telegram.apiRoot },
      pollingTimeoutSeconds: 5,
      bursts: 'latest',
    });
    bot = new Bot({
      channels: [channel],
      agents: [agent],
      store: new InMemoryConversationStore(),
      logger: silentLogger,
      ...options,
    });
    await bot.start();
    return bot;
  }

  /** Ada writes three fragments, the last two while the agent works on the first. */
  async function fragments(bot: Bot) {
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'hey' });
    await agent.started;
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'quick question' });
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'how do I reset my password?' });
    await waitForTurns(bot, 3);
    agent.release();
    await bot.idle();
  }

  it('answers the fragments sent while the agent works once, as the channel says', async () => {
    const started = await startBot();
    await fragments(started);
    expect(telegram.sent.filter((sent) => sent.method === 'sendMessage')).toHaveLength(2);
    const turns = await started.store.get('telegram:1001');
    expect(turns.filter((turn) => turn.participant.kind === 'user')).toHaveLength(3);
  });

  it('answers every turn when the bot says queue, whatever the channel says', async () => {
    const started = await startBot({ bursts: 'queue' });
    await fragments(started);
    expect(telegram.sent.filter((sent) => sent.method === 'sendMessage')).toHaveLength(3);
  });
});

async function waitForTurns(bot: Bot, count: number): Promise<void> {
  for (;;) {
    const turns = await bot.store.get('telegram:1001');
    if (turns.filter((turn) => turn.participant.kind === 'user').length >= count) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
