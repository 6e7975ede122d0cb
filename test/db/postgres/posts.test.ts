import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Bot, silentLogger } from 'colloquy';
import type { BotOptions, SendHook } from 'colloquy';
import type { PostgresConversationStore } from 'colloquy/postgres';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';
import {
  dropTestDatabases,
  emptyDatabase,
  openPostgresStore,
  postgres,
  postgresReachable,
  testDatabase,
} from './postgres.fixtures.js';

describe.skipIf(!postgresReachable)(
  `posts from two instances on Postgres (${JSON.stringify(postgres)})`,
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

    async function instance(
      options: Partial<BotOptions> = {},
      wrap: (store: PostgresConversationStore) => PostgresConversationStore = (store) => store,
    ): Promise<{ bot: Bot; store: PostgresConversationStore }> {
      const store = await openPostgresStore(url);
      stores.push(store);
      const channel = new TelegramChannel({
        token: telegram.token,
        client: { apiRoot: telegram.apiRoot },
        botInfo: telegram.botInfo,
        pollingTimeoutSeconds: 1,
        retry: { baseDelayMs: 5 },
      });
      const bot = new Bot({
        channels: [channel],
        agents: [],
        store: wrap(store),
        logger: silentLogger,
        shared: true,
        ...options,
      });
      bots.push(bot);
      await bot.start();
      return { bot, store };
    }

    it('sends each due post once when two instances look for due posts at once', async () => {
      const a = await instance();
      const b = await instance();
      const at = new Date(Date.now() + 300);
      const posts = 20;
      for (let i = 0; i < posts; i++) {
        const from = i % 2 === 0 ? a.bot : b.bot;
        await from.send(`telegram:${2000 + i}`, `reminder ${i}`, { at });
      }

      await telegram.waitForSent(posts, 15_000);
      await expect
        .poll(async () => (await a.store.getPosts({ statuses: ['sent'] })).length, {
          timeout: 15_000,
        })
        .toBe(posts);
      await a.bot.idle();
      await b.bot.idle();

      const texts = telegram.sent.map((sent) => sent.text).sort();
      expect(texts).toEqual(Array.from({ length: posts }, (_, i) => `reminder ${i}`).sort());
      const rows = await a.store.pool.query(
        `SELECT count(*)::int AS n FROM messages WHERE metadata->>'origin' = 'post' AND delivery = 'sent'`,
      );
      expect(rows.rows[0]).toEqual({ n: posts });
    });

    it('sends a post once when its send outlasts its claim while another instance looks for due posts', async () => {
      const shared = { leaseTtlMs: 300 };
      let open!: () => void;
      const opened = new Promise<void>((resolve) => (open = resolve));
      let held!: () => void;
      const holding = new Promise<void>((resolve) => (held = resolve));
      const slow: SendHook = async (post, send) => {
        held();
        await opened; // a send that takes as long as the test needs
        return send(post);
      };
      const a = await instance({ shared, sendHooks: [slow] });
      let looks = 0;
      const counted = (store: PostgresConversationStore) =>
        new Proxy(store, {
          get(target, key) {
            const value = Reflect.get(target, key) as unknown;
            if (key !== 'claimDuePosts') return value;
            return async (...args: Parameters<PostgresConversationStore['claimDuePosts']>) => {
              const due = await target.claimDuePosts(...args);
              looks++;
              return due;
            };
          },
        });
      const b = await instance({ shared }, counted);

      const sending = a.bot.send('telegram:3001', 'Your call starts now');
      await holding; // claimed by a for 300 ms, and sending
      const from = looks;
      while (looks < from + 2) await new Promise((resolve) => setTimeout(resolve, 50)); // b looked twice, a second apart
      open();

      expect(await sending).toMatchObject({ status: 'sent' });
      await b.bot.idle();
      expect(telegram.sent.filter((sent) => sent.text === 'Your call starts now')).toHaveLength(1);
      expect(await a.store.getPosts()).toMatchObject([{ status: 'sent' }]);
    });
  },
);
