import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Chat, User } from 'grammy/types';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BaseAgent, Bot, silentLogger } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';
import { answer } from '../../fixtures/model-answer.js';
import { pacedModel } from '../../fixtures/paced-model.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const adaDm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };

class SupportAgent extends BaseAgent {
  name = 'support-agent';
  description = 'Answers questions about orders';
  instructions = 'Be brief.';
  readonly paced = pacedModel();
  override model = this.paced.model;
}

describe('a reply streamed on Telegram (grammy against FakeTelegram, SQLite store)', () => {
  let telegram: FakeTelegram;
  let dir: string;
  let store: SqliteConversationStore;
  let agent: SupportAgent;
  let bot: Bot;

  beforeEach(async () => {
    telegram = await FakeTelegram.start();
    dir = mkdtempSync(join(tmpdir(), 'colloquy-telegram-stream-'));
    store = new SqliteConversationStore({ path: join(dir, 'colloquy.db') });
    agent = new SupportAgent();
    const channel = new TelegramChannel({
      token: telegram.token,
      client: { apiRoot: telegram.apiRoot },
      pollingTimeoutSeconds: 5,
    });
    bot = new Bot({ channels: [channel], agents: [agent], store, logger: silentLogger });
    await bot.start();
  });

  afterEach(async () => {
    await bot.stop();
    await telegram.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const replies = async () =>
    (await bot.store.get('telegram:1001')).filter((turn) => turn.participant.kind === 'agent');

  it('posts the first words, edits the message as the model writes, and records one reply', async () => {
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'where is my order?' });
    await agent.paced.started;
    agent.paced.say('Order 4711');
    const [first] = await telegram.waitForSent(1);
    expect(first).toMatchObject({ method: 'sendMessage', text: 'Order 4711' });
    const [recorded] = await replies();
    expect(recorded).toMatchObject({ content: 'Order 4711', delivery: 'sending' });

    agent.paced.finish(' ships tomorrow.');
    await telegram.waitForSent((sent) => sent.text === 'Order 4711 ships tomorrow.');
    await bot.idle();

    const messageId = String(first?.message.message_id);
    expect(telegram.sent.map((sent) => sent.method)).toEqual(['sendMessage', 'editMessageText']);
    expect(telegram.sent[1]?.payload).toMatchObject({ message_id: Number(messageId) });
    const stored = await replies();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      content: 'Order 4711 ships tomorrow.',
      delivery: 'sent',
      metadata: { messageId },
    });
    expect(stored[0]?.editedAt).toBeUndefined();
  });

  it('continues an answer longer than one message in a next message', async () => {
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'tell me everything' });
    await agent.paced.started;
    const paragraph = `${'All about order 4711. '.repeat(100).trim()}\n\n`;
    agent.paced.say(paragraph);
    await telegram.waitForSent(1);
    agent.paced.finish(paragraph.repeat(2));
    await telegram.waitForSent((sent) => sent.method === 'sendMessage' && sent.text.length < 3000);
    await bot.idle();

    const posts = telegram.sent.filter((sent) => sent.method === 'sendMessage');
    expect(posts.length).toBeGreaterThan(1);
    expect(posts.every((sent) => sent.text.length <= 4096)).toBe(true);
    const stored = await replies();
    expect(stored).toHaveLength(1);
    expect(stored[0]?.content).toBe(paragraph.repeat(3));
    expect(stored[0]?.metadata.partMessageIds).toHaveLength(posts.length - 1);
  });

  it('sends the answer whole for an agent that does not stream', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: async () => answer('Order 4711 ships tomorrow.'),
      doStream: agent.paced.model.doStream,
    });
    agent.stream = false;
    agent.model = model;
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'where is my order?' });
    await telegram.waitForSent(1);
    await bot.idle();
    expect(telegram.sent.map((sent) => [sent.method, sent.text])).toEqual([
      ['sendMessage', 'Order 4711 ships tomorrow.'],
    ]);
    expect(model.doStreamCalls).toHaveLength(0);
  });
});
