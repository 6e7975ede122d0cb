import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Api as GrammyApi } from 'grammy';
import type { Chat, User } from 'grammy/types';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Bot, silentLogger } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';
import { answer } from '../../fixtures/model-answer.js';
import { PacedAgent } from '../../fixtures/paced-model.js';
import { botOn } from '../../fixtures/gated-agent.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const adaDm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };
const team: Chat = { id: -2002, type: 'group', title: 'Team' };

describe('a reply streamed on Telegram (grammy against FakeTelegram, SQLite store)', () => {
  let telegram: FakeTelegram;
  let dir: string;
  let store: SqliteConversationStore;
  let agent: PacedAgent;
  let bot: Bot;

  beforeEach(async () => {
    telegram = await FakeTelegram.start();
    dir = mkdtempSync(join(tmpdir(), 'colloquy-telegram-stream-'));
    store = new SqliteConversationStore({ path: join(dir, 'colloquy.db') });
    agent = new PacedAgent();
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

  const groupReplies = async () =>
    (await bot.store.get('telegram:-2002')).filter((turn) => turn.participant.kind === 'agent');

  it('posts the first words in a group, edits the message as the model writes, and records one reply', async () => {
    telegram.sendUserMessage({
      chat: team,
      from: ada,
      text: '@colloquy_test_bot where is my order?',
    });
    await agent.paced.started;
    agent.paced.say('Order **4711**');
    const [first] = await telegram.waitForSent(1);
    expect(first).toMatchObject({ method: 'sendMessage', text: 'Order 4711' });
    const [recorded] = await groupReplies();
    expect(recorded).toMatchObject({ content: 'Order **4711**', delivery: 'sending' });

    agent.paced.finish(' ships tomorrow.');
    await telegram.waitForSent((sent) => sent.text === 'Order 4711 ships tomorrow.');
    await bot.idle();

    const messageId = String(first?.message.message_id);
    expect(telegram.sent.map((sent) => sent.method)).toEqual(['sendMessage', 'editMessageText']);
    // The edit keeps the formatting: bold stays an entity, never raw markup.
    expect(telegram.sent[1]?.payload).toMatchObject({
      message_id: Number(messageId),
      parse_mode: 'HTML',
    });
    expect(telegram.sent[1]?.message).toMatchObject({ entities: [{ type: 'bold' }] });
    const stored = await groupReplies();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      content: 'Order **4711** ships tomorrow.',
      delivery: 'sent',
      metadata: { messageId },
    });
    expect(stored[0]?.editedAt).toBeUndefined();
    // like a whole reply, it carries the model's response id
    expect(stored[0]?.traceId).toEqual(expect.any(String));
  });

  it('has the text of each post and edit in the reply’s row before Telegram receives it', async () => {
    const db = new Database(join(dir, 'colloquy.db'), { readonly: true });
    const words = (text: string) =>
      text
        .replace(/<[^>]+>/g, '')
        .replace(/[^\p{L}\p{N}]+/gu, ' ')
        .trim();
    const seen: { shown: string; recorded: string }[] = [];
    telegram.onCall = ({ method, payload }) => {
      if (method !== 'sendMessage' && method !== 'editMessageText') return;
      const row = db
        .prepare("SELECT content FROM messages WHERE id LIKE '%:reply' ORDER BY rowid DESC")
        .get() as { content: string } | undefined;
      seen.push({ shown: words(String(payload.text)), recorded: words(row?.content ?? '') });
    };
    try {
      telegram.sendUserMessage({ chat: team, from: ada, text: '@colloquy_test_bot where is it?' });
      await agent.paced.started;
      agent.paced.say('Order **4711**');
      await telegram.waitForSent(1);
      agent.paced.finish(' ships tomorrow.');
      await telegram.waitForSent((sent) => sent.text === 'Order 4711 ships tomorrow.');
      await bot.idle();
    } finally {
      db.close();
    }

    expect(seen.map((call) => call.shown)).toEqual(['Order 4711', 'Order 4711 ships tomorrow']);
    for (const { shown, recorded } of seen) expect(recorded).toBe(shown);
  });

  it('shows a draft in a private chat as the model writes, and sends the whole answer once', async () => {
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'where is my order?' });
    await agent.paced.started;
    agent.paced.say('Order 4711');
    await telegram.waitForCall('sendMessageDraft');
    const [draft] = telegram.drafts;
    expect(draft).toMatchObject({ chatId: 1001, text: 'Order 4711', canStop: true });
    expect(telegram.sent).toHaveLength(0); // a draft is a preview, not a message
    const [recorded] = await replies();
    expect(recorded).toMatchObject({ content: 'Order 4711', delivery: 'sending' });

    agent.paced.finish(' ships tomorrow.');
    const [sent] = await telegram.waitForSent(1);
    await bot.idle();

    expect(sent).toMatchObject({ method: 'sendMessage', text: 'Order 4711 ships tomorrow.' });
    expect(telegram.sent).toHaveLength(1);
    const stored = await replies();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      content: 'Order 4711 ships tomorrow.',
      delivery: 'sent',
      metadata: { messageId: String(sent?.message.message_id) },
    });
  });

  it('stops the run when the person presses stop on the draft, and keeps what was shown', async () => {
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'tell me a long story' });
    await agent.paced.started;
    agent.paced.say('Once upon a time');
    await telegram.waitForCall('sendMessageDraft');
    const [draft] = telegram.drafts;

    expect(telegram.stopGeneration(adaDm, draft!.draftId)).toBe(true);
    const [sent] = await telegram.waitForSent(1);
    await bot.idle();

    expect(sent).toMatchObject({ method: 'sendMessage', text: 'Once upon a time' });
    const stored = await replies();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      content: 'Once upon a time',
      delivery: 'sent',
      metadata: { stoppedBy: 'person' },
    });
    const asked = (await bot.store.get('telegram:1001')).find(
      (turn) => turn.participant.kind === 'user',
    );
    const [run] = await store.getRuns({ messageId: asked!.id });
    expect(run).toMatchObject({ status: 'answered', error: 'stopped by the person' });
  });

  it('continues an answer longer than one message in a next message', async () => {
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'tell me everything' });
    await agent.paced.started;
    const paragraph = `${'All about order 4711. '.repeat(100).trim()}\n\n`;
    agent.paced.say(paragraph);
    await telegram.waitForCall('sendMessageDraft');
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

describe('edits Telegram rate-limits (grammy against FakeTelegram)', () => {
  it('refuses an edit that changes nothing, and one past the limit with retry_after', async () => {
    const telegram = await FakeTelegram.start({ editLimit: { calls: 1, perMs: 60_000 } });
    const api = new GrammyApi(telegram.token, { apiRoot: telegram.apiRoot });
    try {
      const sent = await api.sendMessage(-2002, 'Order 4711');
      await expect(api.editMessageText(-2002, sent.message_id, 'Order 4711')).rejects.toMatchObject(
        { error_code: 400, description: expect.stringContaining('message is not modified') },
      );
      await api.editMessageText(-2002, sent.message_id, 'Order 4711 ships');
      await expect(
        api.editMessageText(-2002, sent.message_id, 'Order 4711 ships tomorrow'),
      ).rejects.toMatchObject({ error_code: 429, parameters: { retry_after: 60 } });
    } finally {
      await telegram.close();
    }
  });

  it('waits out a 429 on an edit and shows the whole answer, never an edit that changes nothing', async () => {
    const telegram = await FakeTelegram.start({ editLimit: { calls: 1, perMs: 1000 } });
    const agent = new PacedAgent();
    const channel = new TelegramChannel({
      token: telegram.token,
      client: { apiRoot: telegram.apiRoot },
      pollingTimeoutSeconds: 5,
    });
    const bot = await botOn(channel, agent);
    try {
      telegram.sendUserMessage({ chat: team, from: ada, text: '@colloquy_test_bot order?' });
      await agent.paced.started;
      agent.paced.say('Order 4711');
      await telegram.waitForSent(1);
      agent.paced.say(' ships');
      await telegram.waitForSent(2);
      agent.paced.finish(' tomorrow.');
      await telegram.waitForSent((sent) => sent.text === 'Order 4711 ships tomorrow.');
      await bot.idle();

      const edits = telegram.calls.filter((call) => call.method === 'editMessageText');
      const shown = telegram.sent.filter((sent) => sent.method === 'editMessageText');
      expect(edits.length).toBe(shown.length + 1); // one 429, then the same edit again
      const texts = shown.map((sent) => sent.text);
      expect(texts).toEqual([...new Set(texts)]);
      const [reply] = (await bot.store.get('telegram:-2002')).filter(
        (turn) => turn.participant.kind === 'agent',
      );
      expect(reply).toMatchObject({ content: 'Order 4711 ships tomorrow.', delivery: 'sent' });
    } finally {
      await bot.stop();
      await telegram.close();
    }
  });
});
