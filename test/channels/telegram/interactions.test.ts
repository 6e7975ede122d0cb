import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Chat, MessageEntity, User } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot, ColloquyError, ConversationStore } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import type { TelegramChannelOptions } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';
import type { FakeTelegramOptions } from 'colloquy/testing';
import Database from 'better-sqlite3';
import {
  interactionAgents,
  LONG_ID,
  longIdAsker,
  pressesOf,
  sizeAsker,
  streaming,
} from '../interactions.fixtures.js';
import { gatedStore } from '../../fixtures/gated-store.js';
import { startTelegramBot } from './telegram.fixtures.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const grace: User = { id: 1002, is_bot: false, first_name: 'Grace' };
const adaDm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };
const group: Chat = { id: -1001234567890, type: 'supergroup', title: 'Orders Team' };

function command(text: string): MessageEntity[] {
  return [{ type: 'bot_command', offset: 0, length: text.split(' ')[0]!.length }];
}

describe('commands and buttons on Telegram (grammy against FakeTelegram)', () => {
  let telegram: FakeTelegram;
  let dir: string;
  let store: SqliteConversationStore;
  let bot: Bot;
  let errors: ColloquyError[];
  let agents: ReturnType<typeof interactionAgents>;
  let release: (() => void) | undefined;

  async function startBot(
    fake: FakeTelegramOptions = {},
    more: { store?: ConversationStore; channel?: Partial<TelegramChannelOptions> } = {},
  ) {
    telegram = await FakeTelegram.start(fake);
    const { support, billing, commands } = agents;
    const options = { agents: [support, billing], commands, store: more.store ?? store };
    const retry = { baseDelayMs: 5, maxRetries: 0 };
    const started = await startTelegramBot(telegram, options, { retry, ...more.channel });
    ({ bot, errors } = started);
    return started.channel;
  }

  function say(chat: Chat, from: User, text: string) {
    return telegram.sendUserMessage({ chat, from, text, entities: command(text) });
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'colloquy-telegram-interactions-'));
    store = new SqliteConversationStore({ path: join(dir, 'colloquy.db') });
    agents = interactionAgents();
  });

  afterEach(async () => {
    release?.();
    release = undefined;
    await bot?.stop();
    await telegram.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the commands with setMyCommands at start', async () => {
    await startBot();
    expect(telegram.interactions.commands).toEqual([
      { command: 'refund', description: 'Refund an order' },
      { command: 'status', description: 'Order status' },
      { command: 'ping', description: 'Is the bot up?' },
    ]);
  });

  it('has a command answered by its agent, recorded as a command turn', async () => {
    await startBot();
    say(adaDm, ada, '/status 4242');
    const [reply] = await telegram.waitForSent(1);
    expect(reply!.text).toBe('support: /status 4242');
    await bot.idle();
    expect(agents.billing.turns).toHaveLength(0);
    const [turn] = await store.get('telegram:1001', {
      limit: 1,
      participantIds: ['telegram:1001'],
    });
    expect(turn!.metadata.interaction).toEqual({
      type: 'command',
      name: 'status',
      args: '4242',
      agent: 'support',
    });
  });

  it('routes a button press to the agent whose message it is under, once', async () => {
    await startBot();
    say(group, ada, '/refund@colloquy_test_bot 4242');
    const [asked] = await telegram.waitForSent(1);
    expect(asked!.text).toBe('Refund order 4242?');
    expect(asked!.message.reply_markup).toEqual({
      inline_keyboard: [
        [
          { text: 'Approve', callback_data: 'b:approve' },
          { text: 'Deny', callback_data: 'b:deny' },
        ],
      ],
    });
    telegram.pressButton(asked!.message, ada, 'b:approve');
    telegram.pressButton(asked!.message, ada, 'b:approve');
    await telegram.waitForSent(2);
    await bot.idle();
    await telegram.waitForCall('answerCallbackQuery', 2);
    expect(telegram.sent.map((s) => s.text)).toEqual(['Refund order 4242?', 'billing: approve']);
    expect(telegram.interactions.answers.map((a) => a.inTime)).toEqual([true, true]);
    await telegram.waitForCall('editMessageReplyMarkup');
    const { chat, message_id } = asked!.message;
    expect(telegram.messageNow(chat.id, message_id)?.reply_markup).toBeUndefined();
    expect(agents.support.turns).toHaveLength(0);
    const presses = await store.get(`telegram:${group.id}`, { participantIds: ['telegram:1001'] });
    const press = presses.find((t) => t.metadata.interaction?.type === 'button');
    expect(press).toMatchObject({
      content: 'Approve',
      metadata: {
        replyToParticipantId: 'billing',
        interaction: { type: 'button', id: 'approve', value: 'approve', agent: 'billing' },
      },
    });
    const concerning = async (agent: string) =>
      (await store.get(`telegram:${group.id}`, { concerning: { aliases: [agent] } })).map(
        (t) => t.content,
      );
    expect(await concerning('billing')).toContain('Approve');
    expect(await concerning('support')).not.toContain('Approve');
  });

  it('shows a select as rows of buttons and routes the option picked, with its value', async () => {
    agents.support = sizeAsker();
    await startBot();
    say(adaDm, ada, '/status');
    const [asked] = await telegram.waitForSent(1);
    expect(asked!.message.reply_markup).toEqual({
      inline_keyboard: [
        [
          { text: 'Small', callback_data: 's:size:s' },
          { text: 'Medium', callback_data: 's:size:m' },
        ],
        [{ text: 'Large', callback_data: 's:size:l' }],
      ],
    });
    telegram.pressButton(asked!.message, ada, 's:size:m');
    const sent = await telegram.waitForSent(2);
    expect(sent[1]!.text).toBe('size m');
    await bot.idle();
    const [press] = await store.get('telegram:1001', {
      limit: 1,
      participantIds: ['telegram:1001'],
    });
    expect(press).toMatchObject({
      content: 'Medium',
      metadata: { interaction: { type: 'button', id: 'size', value: 'm', agent: 'support' } },
    });
  });

  it('answers a changed choice, answers the same choice twice once, and stores a redelivered press once', async () => {
    agents.support = sizeAsker();
    await startBot();
    say(adaDm, ada, '/status');
    const [asked] = await telegram.waitForSent(1);
    const small = telegram.pressButton(asked!.message, ada, 's:size:s');
    telegram.pressButton(asked!.message, ada, 's:size:l');
    telegram.pressButton(asked!.message, ada, 's:size:l');
    telegram.pushUpdate({ callback_query: small.callback_query! });
    await telegram.waitForSent(3);
    await telegram.waitForCall('answerCallbackQuery', 4);
    await bot.idle();
    expect(telegram.sent.map((s) => s.text)).toEqual(['Which size?', 'size s', 'size l']);
    const turns = await store.get('telegram:1001', { participantIds: ['telegram:1001'] });
    expect(pressesOf(turns)).toEqual([
      ['s', undefined],
      ['l', undefined],
      ['l', 'repeated'],
    ]);
  });

  it('routes a press on a message hundreds of turns back to the agent that sent it', async () => {
    await startBot();
    say(group, ada, '/refund 4242');
    const [asked] = await telegram.waitForSent(1);
    await bot.idle();
    const conversationId = `telegram:${group.id}`;
    const [question] = await store.get(conversationId, { participantIds: ['billing'] });
    const asker = Date.parse(question!.timestamp);
    const chatter = Array.from({ length: 600 }, (_, i) => ({
      kind: 'append' as const,
      message: {
        id: `chatter-${i}`,
        conversationId,
        participant: { kind: 'user' as const, id: `telegram:${grace.id}`, displayName: 'Grace' },
        content: `chatter ${i}`,
        timestamp: new Date(asker + i + 1).toISOString(),
        scope: question!.scope,
        metadata: {
          channelType: 'telegram',
          channelId: String(group.id),
          messageId: `${9000 + i}`,
        },
      },
    }));
    await store.commit(chatter);
    telegram.pressButton(asked!.message, ada, 'b:approve');
    const sent = await telegram.waitForSent(2);
    expect(sent[1]!.text).toBe('billing: approve');
  });

  it('refuses a press by someone the message did not answer, with one line', async () => {
    await startBot();
    say(group, ada, '/refund 4242');
    const [asked] = await telegram.waitForSent(1);
    telegram.pressButton(asked!.message, grace, 'b:approve');
    const sent = await telegram.waitForSent(2);
    expect(sent[1]!.text).toBe('Those buttons are for the person the message answered.');
    await bot.idle();
    expect(agents.billing.turns).toHaveLength(1);
  });

  it('answers a command it does not know with a clear line', async () => {
    await startBot();
    say(adaDm, ada, '/frobnicate now');
    const [reply] = await telegram.waitForSent(1);
    expect(reply!.text).toBe('There is no /frobnicate command; try /refund, /status, /ping.');
    await bot.idle();
    expect(agents.support.turns).toHaveLength(0);
    expect(agents.billing.turns).toHaveLength(0);
  });

  it('answers a command by its handler', async () => {
    await startBot();
    say(adaDm, ada, '/ping');
    const [reply] = await telegram.waitForSent(1);
    expect(reply!.text).toBe('pong');
  });

  it('reports an answer to a press that came after the deadline, as the fake refuses it', async () => {
    await startBot({ callbackDeadlineMs: 0 });
    say(adaDm, ada, '/refund 7');
    const [asked] = await telegram.waitForSent(1);
    telegram.pressButton(asked!.message, ada, 'b:deny');
    await telegram.waitForSent(2);
    await telegram.waitForCall('answerCallbackQuery');
    await bot.idle();
    expect(telegram.interactions.answers).toEqual([{ id: expect.any(String), inTime: false }]);
    expect(errors.map((e) => e.message).join('\n')).toMatch(/query is too old/);
  });

  it('takes the buttons away once a press is answered, records that as an edit of the buttons alone, and refuses a later press', async () => {
    await startBot();
    say(group, ada, '/refund 4242');
    const [asked] = await telegram.waitForSent(1);
    telegram.pressButton(asked!.message, ada, 'b:approve');
    await telegram.waitForSent(2);
    await telegram.waitForCall('editMessageReplyMarkup');
    await bot.idle();
    const { chat, message_id } = asked!.message;
    expect(telegram.messageNow(chat.id, message_id)?.reply_markup).toBeUndefined();
    const replies = await store.get(`telegram:${group.id}`, { participantIds: ['billing'] });
    const question = replies.find((r) => r.metadata.messageId === String(message_id));
    expect(question).toMatchObject({ content: 'Refund order 4242?', editedAt: expect.any(String) });
    const db = new Database(join(dir, 'colloquy.db'), { readonly: true });
    const revisions = db.prepare('SELECT content FROM message_revisions').all();
    db.close();
    expect(revisions).toEqual([]);

    telegram.pressButton(asked!.message, ada, 'b:deny');
    const sent = await telegram.waitForSent(3);
    expect(sent[2]!.text).toBe('That button is no longer available.');
    await bot.idle();
    expect(agents.billing.turns).toHaveLength(2);
  });

  it('answers one of Approve and Deny pressed before either is stored, and refuses the other as used', async () => {
    // given a question with Approve and Deny, on a bot that takes updates by webhook and whose
    // store's writes are slow
    const gated = gatedStore(store);
    const secretToken = 's3cret';
    const webhook = { secretToken, port: 0, host: '127.0.0.1' };
    const channel = await startBot(
      {},
      { store: gated.store, channel: { mode: 'webhook', webhook } },
    );
    const post = (update: Parameters<FakeTelegram['postWebhook']>[1]) =>
      telegram.postWebhook(`http://127.0.0.1:${channel.webhookPort}/telegram`, update, secretToken);
    const text = '/refund 4242';
    await post({
      message: telegram.buildMessage({ chat: group, from: ada, text, entities: command(text) }),
    });
    const [asked] = await telegram.waitForSent(1);
    await bot.idle();
    const held = gated.hold();
    release = held.release;

    // when Ada taps Approve, then Deny while Approve is being stored
    const press = (data: string) =>
      post({ callback_query: telegram.interactions.press(asked!.message, ada, data) });
    const approved = press('b:approve');
    await held.arrived;
    const denied = press('b:deny');
    await until(() => (bot.captureStats?.waiting ?? 0) > 0);
    held.release();
    expect([(await approved).status, (await denied).status]).toEqual([200, 200]);
    await bot.idle();

    // then Approve is answered, and Deny with one line
    expect(telegram.sent.map((s) => s.text)).toEqual([
      'Refund order 4242?',
      'billing: approve',
      'That button is no longer available.',
    ]);
    expect(agents.billing.turns).toHaveLength(2);
    const turns = await store.get(`telegram:${group.id}`, { participantIds: ['telegram:1001'] });
    expect(pressesOf(turns)).toEqual([
      ['approve', undefined],
      ['deny', 'used'],
    ]);
  });

  it('carries an id longer than callback_data holds as its place, and routes the press by it', async () => {
    agents.billing = longIdAsker();
    await startBot();
    say(adaDm, ada, '/refund 1');
    const [asked] = await telegram.waitForSent(1);
    expect(asked!.message.reply_markup).toEqual({
      inline_keyboard: [[{ text: 'Approve', callback_data: 'b:#0' }]],
    });
    telegram.pressButton(asked!.message, ada, 'b:#0');
    const sent = await telegram.waitForSent(2);
    expect(sent[1]!.text).toBe('billing: the long one');
    await bot.idle();
    const [press] = await store.get('telegram:1001', {
      limit: 1,
      participantIds: ['telegram:1001'],
    });
    expect(press!.metadata.interaction).toMatchObject({ id: LONG_ID, value: LONG_ID });
  });

  it('shows the buttons of a streamed reply under its final text', async () => {
    agents.billing = streaming(agents.billing);
    await startBot();
    say(group, ada, '/refund 4242');
    await telegram.waitForCall('editMessageReplyMarkup');
    await bot.idle();
    const [asked] = telegram.sent;
    const { chat, message_id } = asked!.message;
    expect(telegram.messageNow(chat.id, message_id)).toMatchObject({
      text: 'Refund order 4242?',
      reply_markup: {
        inline_keyboard: [
          [
            { text: 'Approve', callback_data: 'b:approve' },
            { text: 'Deny', callback_data: 'b:deny' },
          ],
        ],
      },
    });
    telegram.pressButton(telegram.messageNow(chat.id, message_id)!, ada, 'b:deny');
    await telegram.waitForSent((s) => s.text === 'billing: deny');
  });

  it('shows the buttons of a reply streamed as a draft in a private chat under the message it ends in', async () => {
    agents.billing = streaming(agents.billing);
    await startBot();
    say(adaDm, ada, '/refund 7');
    await telegram.waitForCall('sendMessageDraft');
    await telegram.waitForCall('editMessageReplyMarkup');
    await bot.idle();
    const asked = telegram.sent.find((s) => s.text === 'Refund order 7?');
    const { chat, message_id } = asked!.message;
    expect(telegram.messageNow(chat.id, message_id)?.reply_markup).toEqual({
      inline_keyboard: [
        [
          { text: 'Approve', callback_data: 'b:approve' },
          { text: 'Deny', callback_data: 'b:deny' },
        ],
      ],
    });
  });

  it('leaves /start to the agents when the bot declares commands', async () => {
    await startBot();
    say(adaDm, ada, '/start');
    await telegram.waitForSent(2);
    await bot.idle();
    const texts = telegram.sent.map((s) => s.text);
    expect(texts).toContain('support: /start');
    expect(texts.join('\n')).not.toMatch(/no \/start command/);
  });
});

/** Resolves once `condition` holds, looking after each pass of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}
