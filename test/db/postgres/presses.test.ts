import type { Chat, MessageEntity, User } from 'grammy/types';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Bot, silentLogger } from 'colloquy';
import type { NewMessage, StoreOperation } from 'colloquy';
import type { PostgresConversationStore } from 'colloquy/postgres';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';
import { gatedStore } from '../../fixtures/gated-store.js';
import { interactionAgents, pressesOf } from '../../channels/interactions.fixtures.js';
import {
  dropTestDatabases,
  emptyDatabase,
  openPostgresStore,
  postgres,
  postgresReachable,
  testDatabase,
} from './postgres.fixtures.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const group: Chat = { id: -1001234567890, type: 'supergroup', title: 'Orders Team' };
const SECRET = 's3cret';

describe.skipIf(!postgresReachable)(
  `presses of one message on two instances on Postgres (${JSON.stringify(postgres)})`,
  () => {
    let url = '';
    let telegram: FakeTelegram;
    const bots: Bot[] = [];
    const stores: PostgresConversationStore[] = [];

    beforeAll(async () => {
      url = await testDatabase();
      telegram = await FakeTelegram.start();
    });
    afterEach(async () => {
      for (const bot of bots.splice(0)) await bot.stop();
      for (const store of stores.splice(0)) await store.close();
      await emptyDatabase(url);
    });
    afterAll(async () => {
      await telegram.close();
      await dropTestDatabases();
    });

    /** A bot instance on the shared database, taking Telegram updates by webhook. */
    async function instance(agents: ReturnType<typeof interactionAgents>) {
      const store = await openPostgresStore(url);
      stores.push(store);
      const gated = gatedStore(store);
      const channel = new TelegramChannel({
        token: telegram.token,
        client: { apiRoot: telegram.apiRoot },
        botInfo: telegram.botInfo,
        mode: 'webhook',
        webhook: { secretToken: SECRET, port: 0, host: '127.0.0.1' },
        retry: { baseDelayMs: 5, maxRetries: 0 },
      });
      const { support, billing, commands } = agents;
      const bot = new Bot({
        channels: [channel],
        agents: [support, billing],
        commands,
        store: gated.store,
        logger: silentLogger,
        shared: true,
      });
      bots.push(bot);
      await bot.start();
      const post = (update: Parameters<FakeTelegram['postWebhook']>[1]) =>
        telegram.postWebhook(`http://127.0.0.1:${channel.webhookPort}/telegram`, update, SECRET);
      return { bot, store, gated, post };
    }

    it('answers one of Approve and Deny pressed on two instances at once, and refuses the other as used', async () => {
      // given a question with Approve and Deny, and two instances behind a load balancer
      const agents = interactionAgents();
      const a = await instance(agents);
      const b = await instance(agents);
      const text = '/refund 4242';
      const entities: MessageEntity[] = [{ type: 'bot_command', offset: 0, length: 7 }];
      await a.post({ message: telegram.buildMessage({ chat: group, from: ada, text, entities }) });
      const [asked] = await telegram.waitForSent(1);
      await a.bot.idle();

      // when Ada's Approve reaches instance A, which answers it but has not stored it yet, and
      // her Deny reaches instance B, which reads the store before A's commit and stores Deny
      const held = a.gated.hold();
      const press = (data: string) => ({
        callback_query: telegram.interactions.press(asked!.message, ada, data),
      });
      const approved = a.post(press('b:approve'));
      await held.arrived;
      expect((await b.post(press('b:deny'))).status).toBe(200);
      await b.bot.idle();
      held.release();
      expect((await approved).status).toBe(200);
      await a.bot.idle();

      // then Deny, stored first, is answered, and Approve with one line and no agent run
      expect(telegram.sent.map((s) => s.text)).toEqual([
        'Refund order 4242?',
        'billing: deny',
        'That button is no longer available.',
      ]);
      expect(agents.billing.turns.map((t) => t.metadata.interaction?.type)).toEqual([
        'command',
        'button',
      ]);
      const turns = await a.store.get(`telegram:${group.id}`, {
        participantIds: ['telegram:1001'],
      });
      expect(new Map(pressesOf(turns))).toEqual(
        new Map([
          ['approve', 'used'],
          ['deny', undefined],
        ]),
      );
      const approve = turns.find((t) => pressesOf([t])[0]?.[0] === 'approve')!;
      expect(await a.store.getRuns({ messageId: approve.id })).toEqual([]);
    });

    it('stores one press of a message as answered when two instances commit presses of it at once', async () => {
      // given two stores, as two instances open them, and twenty questions
      const [a, b] = [await openPostgresStore(url), await openPostgresStore(url)];
      stores.push(a, b);
      const questions = Array.from({ length: 20 }, (_, i) => question(i));
      await a.commit(questions.map((message) => ({ kind: 'append', message })));

      // when A commits Approve and B commits Deny of each question, both at once
      await Promise.all(
        questions.flatMap((asked) => [
          a.commit(pressed(asked, 'approve')),
          b.commit(pressed(asked, 'deny')),
        ]),
      );

      // then each question has one press answered, with its run, and one refused `used`
      for (const asked of questions) {
        const by = { participantIds: ['telegram:1001'] };
        const presses = pressesOf(await a.get(asked.conversationId, by));
        expect(presses.map(([, refused]) => refused).sort()).toEqual(['used', undefined]);
        const runs = await a.getRuns({ conversationId: asked.conversationId });
        const answered = presses.find(([, refused]) => refused === undefined)![0];
        expect(runs.map((run) => run.messageId)).toEqual([`${asked.id}:${answered}`]);
      }
    });
  },
);

/** Question `n`, in a conversation of its own, with Approve and Deny under it. */
function question(n: number): NewMessage {
  const conversationId = `telegram:${-1000 - n}`;
  return {
    id: `${conversationId}:1`,
    conversationId,
    participant: { kind: 'agent', id: 'billing' },
    content: 'Refund order 4242?',
    timestamp: '2026-01-01T00:00:00.000Z',
    scope: 'channel',
    metadata: {
      channelType: 'telegram',
      channelId: `${-1000 - n}`,
      messageId: '1',
      actions: [
        { id: 'approve', label: 'Approve' },
        { id: 'deny', label: 'Deny' },
      ],
    },
  };
}

/** Ada's press of `id` under `asked`, answered, with its pending run, as intake commits it. */
function pressed(asked: NewMessage, id: string): StoreOperation[] {
  const message: NewMessage = {
    ...asked,
    id: `${asked.id}:${id}`,
    participant: { kind: 'user', id: 'telegram:1001', displayName: 'Ada' },
    content: id,
    timestamp: '2026-01-01T00:00:01.000Z',
    metadata: {
      channelType: 'telegram',
      channelId: asked.metadata.channelId,
      replyToMessageId: '1',
      replyToParticipantId: 'billing',
      interaction: { type: 'button', id, value: id, on: '1', agent: 'billing', uses: asked.id },
    },
  };
  const run = {
    id: `${message.id}:billing`,
    messageId: message.id,
    conversationId: asked.conversationId,
    agentId: 'billing',
    status: 'pending' as const,
    createdAt: message.timestamp,
    attempts: 0,
  };
  return [
    { kind: 'append', message },
    { kind: 'run', run, create: true },
  ];
}
