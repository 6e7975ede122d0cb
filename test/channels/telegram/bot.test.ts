import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { MockLanguageModelV3 } from 'ai/test';
import type { Chat, User } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BaseAgent, Bot, MalformedEventError, PlatformError, silentLogger } from 'colloquy';
import type { ColloquyError } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { TelegramChannel } from 'colloquy/telegram';
import type { TelegramChannelOptions } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';
import { answer } from '../../fixtures/model-answer.js';
import { watched } from '../../fixtures/watched-store.js';

const BOT_ID = 'telegram:123456789';
const ada: User = { id: 1001, is_bot: false, first_name: 'Ada', last_name: 'Lovelace' };
const grace: User = { id: 1002, is_bot: false, first_name: 'Grace', username: 'grace_h' };
const shippingBot: User = {
  id: 777000111,
  is_bot: true,
  first_name: 'Shipping Bot',
  username: 'shipping_bot',
};
const group: Chat = { id: -1001234567890, type: 'supergroup', title: 'Orders Team' };
const forum: Chat = { id: -1009876543210, type: 'supergroup', title: 'Support', is_forum: true };
const graceDm: Chat = { id: 1002, type: 'private', first_name: 'Grace', username: 'grace_h' };
const inGroup = 'telegram:-1001234567890';

class SupportAgent extends BaseAgent {
  name = 'support-agent';
  description = 'Answers questions about orders on Telegram';
  instructions = 'Be brief.';
  reply = 'Order 4711 ships tomorrow.';
  override model = new MockLanguageModelV3({ doGenerate: async () => answer(this.reply) });
}

describe('a Bot on Telegram (grammy against FakeTelegram, SQLite store)', () => {
  let telegram: FakeTelegram;
  let dir: string;
  let dbPath: string;
  let sqlite: SqliteConversationStore;
  let store: ReturnType<typeof watched>;
  let agent: SupportAgent;
  let bot: Bot;
  let errors: ColloquyError[];

  async function startBot(options: Partial<TelegramChannelOptions> = {}) {
    const channel = new TelegramChannel({
      token: telegram.token,
      client: { apiRoot: telegram.apiRoot },
      pollingTimeoutSeconds: 5,
      retry: { baseDelayMs: 5 },
      ...options,
    });
    bot = new Bot({
      channels: [channel],
      agents: [agent],
      store: store.store,
      logger: silentLogger,
    });
    bot.catch((error) => void errors.push(error));
    await bot.start();
    return channel;
  }

  beforeEach(async () => {
    telegram = await FakeTelegram.start();
    dir = mkdtempSync(join(tmpdir(), 'colloquy-telegram-'));
    dbPath = join(dir, 'colloquy.db');
    sqlite = new SqliteConversationStore({ path: dbPath });
    store = watched(sqlite);
    agent = new SupportAgent();
    errors = [];
  });

  afterEach(async () => {
    await bot?.stop();
    await telegram.close();
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a mention in a group as a reply and stores both turns', async () => {
    await startBot();
    const text = '🎉🎉 hey @colloquy_test_bot, can you ask 👩‍💻 @grace_h about 4711?';
    const { message } = telegram.sendUserMessage({ chat: group, from: ada, text });

    const [reply] = await telegram.waitForSent(1);
    const turns = await store.turns(inGroup, (t) => t.length === 2);

    expect(reply?.text).toBe('Order 4711 ships tomorrow.');
    expect(reply?.payload.reply_parameters).toMatchObject({ message_id: message.message_id });
    const [inbound, outbound] = turns;
    expect(inbound).toMatchObject({
      id: `telegram:-1001234567890:${message.message_id}`,
      conversationId: inGroup,
      scope: 'channel',
      content: text,
      participant: { kind: 'user', id: 'telegram:1001', displayName: 'Ada Lovelace' },
      metadata: {
        channelType: 'telegram',
        channelId: '-1001234567890',
        channelName: 'Orders Team',
        messageId: String(message.message_id),
        mentions: [BOT_ID, 'telegram:@grace_h'],
      },
    });
    expect(outbound).toMatchObject({
      id: `telegram:-1001234567890:${message.message_id}:support-agent:reply`,
      conversationId: inGroup,
      scope: 'channel',
      participant: { kind: 'agent', id: 'support-agent' },
      content: 'Order 4711 ships tomorrow.',
      metadata: {
        messageId: String(reply?.message.message_id),
        replyToMessageId: String(message.message_id),
        replyToParticipantId: 'telegram:1001',
      },
    });
    expect(errors).toEqual([]);
  });

  it('answers a direct message', async () => {
    await startBot();
    telegram.sendUserMessage({ chat: graceDm, from: grace, text: 'Where is my order?' });

    const [reply] = await telegram.waitForSent(1);
    const turns = await store.turns('telegram:1002', (t) => t.length === 2);

    expect(reply?.chatId).toBe(1002);
    expect(turns.map((t) => [t.scope, t.participant.id])).toEqual([
      ['dm', 'telegram:1002'],
      ['dm', 'support-agent'],
    ]);
    expect(turns[0]?.metadata.channelName).toBe('Grace');
  });

  it('answers inside a forum topic, which is its own conversation', async () => {
    await startBot();
    const topicStart = telegram.buildMessage({
      chat: forum,
      from: grace,
      text: 'Refunds',
      message_thread_id: 300,
    });
    telegram.sendUserMessage({
      chat: forum,
      from: ada,
      text: '@colloquy_test_bot how long do refunds take?',
      message_thread_id: 300,
      reply_to_message: {
        ...topicStart,
        message_id: 300,
        forum_topic_created: { name: 'Refunds', icon_color: 7322096 },
      },
    });

    const [reply] = await telegram.waitForSent(1);
    const turns = await store.turns('telegram:-1009876543210:300', (t) => t.length === 2);

    expect(reply?.payload).toMatchObject({ message_thread_id: 300 });
    expect(turns[0]).toMatchObject({
      scope: 'thread',
      metadata: { threadId: '300', mentions: [BOT_ID] },
    });
    expect(turns[0]?.metadata.replyToMessageId).toBeUndefined();
    expect(turns[1]).toMatchObject({ scope: 'thread', metadata: { threadId: '300' } });
  });

  it('answers a reply to its own message without a mention, and only records other chatter', async () => {
    await startBot();
    telegram.sendUserMessage({
      chat: group,
      from: ada,
      text: '@colloquy_test_bot status of 4711?',
    });
    const [first] = await telegram.waitForSent(1);

    agent.reply = 'It left the warehouse.';
    telegram.sendUserMessage({ chat: group, from: grace, text: 'lunch anyone?' });
    telegram.sendUserMessage({
      chat: group,
      from: ada,
      text: 'and when does it arrive?',
      reply_to_message: first!.message,
    });
    const sent = await telegram.waitForSent(2);
    const turns = await store.turns(inGroup, (t) => t.length === 5);

    expect(sent.map((s) => s.text)).toEqual([
      'Order 4711 ships tomorrow.',
      'It left the warehouse.',
    ]);
    expect(turns.map((t) => t.content)).toEqual([
      '@colloquy_test_bot status of 4711?',
      'Order 4711 ships tomorrow.',
      'lunch anyone?',
      'and when does it arrive?',
      'It left the warehouse.',
    ]);
    expect(turns[3]?.metadata).toMatchObject({
      replyToMessageId: String(first!.message.message_id),
      replyToParticipantId: BOT_ID,
      mentions: [],
    });
  });

  it('stores and answers a replayed update once', async () => {
    await startBot();
    const { update, message } = telegram.sendUserMessage({
      chat: graceDm,
      from: grace,
      text: 'hello?',
    });
    await telegram.waitForSent(1);

    telegram.pushUpdate(update); // the same update_id again
    telegram.pushUpdate({ message }); // the same message under a new update_id, as after a restart
    telegram.sendUserMessage({ chat: graceDm, from: grace, text: 'still there?' });
    await telegram.waitForSent(2);
    const turns = await store.turns('telegram:1002', (t) => t.length === 4);

    expect(turns.map((t) => t.content)).toEqual([
      'hello?',
      'Order 4711 ships tomorrow.',
      'still there?',
      'Order 4711 ships tomorrow.',
    ]);
    expect(telegram.sent).toHaveLength(2);
  });

  it('records an edit and keeps the earlier text as a revision', async () => {
    await startBot();
    const { message } = telegram.sendUserMessage({
      chat: group,
      from: ada,
      text: 'odrer 4711 is late',
    });
    await store.turns(inGroup, (t) => t.length === 1);

    telegram.sendUserMessage({
      chat: group,
      from: ada,
      text: 'order 4711 is late',
      editOf: message.message_id,
    });
    const [edited] = await store.turns(inGroup, (t) => t[0]?.editedAt !== undefined);

    expect(edited?.content).toBe('order 4711 is late');
    const db = new Database(dbPath, { readonly: true });
    const revisions = db.prepare('SELECT content FROM message_revisions').all();
    db.close();
    expect(revisions).toEqual([{ content: 'odrer 4711 is late' }]);
    expect(telegram.sent).toHaveLength(0);
  });

  it("ignores its own message echoed back and records another bot's message without answering", async () => {
    await startBot();
    telegram.sendUserMessage({ chat: group, from: ada, text: '@colloquy_test_bot hi' });
    const [reply] = await telegram.waitForSent(1);

    telegram.pushUpdate({ message: reply!.message });
    telegram.sendUserMessage({
      chat: group,
      from: shippingBot,
      text: '@colloquy_test_bot parcel 4711 left',
    });
    const turns = await store.turns(inGroup, (t) => t.length === 3);

    expect(turns.map((t) => [t.participant.kind, t.participant.id])).toEqual([
      ['user', 'telegram:1001'],
      ['agent', 'support-agent'],
      ['agent', 'telegram:777000111'],
    ]);
    telegram.sendUserMessage({ chat: group, from: ada, text: '@colloquy_test_bot thanks' });
    await telegram.waitForSent(2);
    expect(telegram.sent).toHaveLength(2);
  });

  it('splits a 10,000-character answer with a code block and emoji into ordered parts', async () => {
    const code = '```ts\n' + 'const party = "🎉";\n'.repeat(250) + '```';
    const prose = 'Here is how the refund works 💸. '.repeat(90);
    agent.reply = `${prose}\n\n${code}\n\n${prose}`.padEnd(10_000, '👋').slice(0, 10_000);
    await startBot();
    const { message } = telegram.sendUserMessage({
      chat: graceDm,
      from: grace,
      text: 'explain refunds',
    });

    const turns = await store.turns('telegram:1002', (t) => t.length === 2);
    const parts = telegram.sent;

    expect(parts.length).toBeGreaterThanOrEqual(3);
    for (const part of parts) {
      expect(part.text.length).toBeLessThanOrEqual(4096);
      expect((part.text.match(/```/g) ?? []).length % 2).toBe(0);
    }
    expect(parts[0]?.payload.reply_parameters).toMatchObject({ message_id: message.message_id });
    expect(parts.slice(1).every((p) => p.payload.reply_parameters === undefined)).toBe(true);
    const ids = parts.map((p) => String(p.message.message_id));
    expect(turns[1]?.metadata).toMatchObject({ messageId: ids[0], partMessageIds: ids.slice(1) });
    expect(turns[1]?.content).toBe(agent.reply);
    const squash = (text: string) => text.replace(/```(ts)?|\s/g, '');
    expect(squash(parts.map((p) => p.text).join(''))).toBe(squash(agent.reply));
  });

  it('waits out a 429 and then answers', async () => {
    await startBot();
    telegram.failNext('sendMessage', { error_code: 429, retry_after: 1 });
    telegram.sendUserMessage({ chat: graceDm, from: grace, text: 'hi' });

    await telegram.waitForSent(1);

    expect(telegram.calls.filter((c) => c.method === 'sendMessage')).toHaveLength(2);
    expect(errors).toEqual([]);
  });

  it('reports a refused send as a PlatformError and keeps running', async () => {
    await startBot();
    telegram.failNext('sendMessage', {
      error_code: 403,
      description: 'Forbidden: bot was blocked by the user',
    });
    telegram.sendUserMessage({ chat: graceDm, from: grace, text: 'hi' });
    telegram.sendUserMessage({ chat: graceDm, from: grace, text: 'hi again' });

    await telegram.waitForSent(1);

    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(PlatformError);
    expect(errors[0]).toMatchObject({ code: '403', conversationId: 'telegram:1002' });
  });

  it('reports a malformed update, skips it and keeps running', async () => {
    await startBot();
    telegram.pushUpdate({ message: { message_id: 5, date: 1763719940, text: 'no chat' } });
    telegram.sendUserMessage({ chat: graceDm, from: grace, text: 'hi' });

    await telegram.waitForSent(1);

    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(MalformedEventError);
  });

  it('takes webhook updates with the right secret token and refuses a wrong one', async () => {
    const channel = await startBot({
      mode: 'webhook',
      webhook: { secretToken: 'right-secret', port: 0, host: '127.0.0.1', path: '/hook' },
    });
    const url = `http://127.0.0.1:${channel.webhookPort}/hook`;
    const forged = telegram.buildMessage({ chat: graceDm, from: grace, text: 'forged' });
    const real = telegram.buildMessage({ chat: graceDm, from: grace, text: 'real' });

    const refused = await telegram.postWebhook(url, { message: forged }, 'wrong-secret');
    const accepted = await telegram.postWebhook(url, { message: real }, 'right-secret');
    const turns = await store.turns('telegram:1002', (t) => t.length === 2);

    expect([refused.status, accepted.status]).toEqual([401, 200]);
    expect(turns.map((t) => t.content)).toEqual(['real', 'Order 4711 ships tomorrow.']);
    expect(telegram.sent).toHaveLength(1);
  });
});
