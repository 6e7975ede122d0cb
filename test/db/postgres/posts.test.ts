import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Bot, silentLogger, StoreError } from 'colloquy';
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
      const { slow, arrived: holding, open } = heldSend();
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

    it('sends nothing from an instance whose claim ran out while its send waited, once another took the post and sent it', async () => {
      // given instance a, whose claims are never renewed and whose send waits until the test
      // lets it go on, and instance b
      const shared = { leaseTtlMs: 300 };
      const { slow, arrived: holding, open } = heldSend();
      const unrenewed = (store: PostgresConversationStore) =>
        new Proxy(store, {
          get(target, key) {
            const value = Reflect.get(target, key) as unknown;
            if (key === 'renewPostClaims') return async () => 0;
            return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
          },
        });
      const a = await instance({ shared, sendHooks: [slow] }, unrenewed);
      const b = await instance({ shared });
      const text = 'Your table is ready';
      const sentOf = () => telegram.sent.filter((sent) => sent.text === text);

      // when a's claim runs out while its send waits, b takes the post and sends it, then
      // a's send goes on
      const sending = a.bot.send('telegram:3003', text);
      await holding;
      await expect.poll(sentOf, { timeout: 15_000 }).toHaveLength(1);
      await expect
        .poll(async () => (await a.store.getPosts()).map((post) => post.status), {
          timeout: 15_000,
        })
        .toEqual(['sent']);
      open();

      // then the post went out once, by b, and a's receipt says it is sent
      expect(await sending).toMatchObject({ status: 'sent' });
      await a.bot.idle();
      await b.bot.idle();
      expect(sentOf()).toHaveLength(1);
      const rows = await a.store.pool.query(
        `SELECT delivery FROM messages WHERE metadata->>'origin' = 'post'`,
      );
      expect(rows.rows).toEqual([{ delivery: 'sent' }]);
    });

    it('does not send again a post its store failure left unfinished once another instance took it', async () => {
      // given instance a, whose store fails (reads and claims) while it sends a post,
      // and instance b, whose send of a post it claimed waits until the test lets it go on
      const shared = { leaseTtlMs: 300 };
      let failing = false;
      let looks = 0;
      const blip = (store: PostgresConversationStore) =>
        new Proxy(store, {
          get(target, key) {
            const value = Reflect.get(target, key) as unknown;
            if (typeof value !== 'function') return value;
            if (key !== 'getMessage' && key !== 'renewPostClaims' && key !== 'claimDuePosts') {
              return (value as () => unknown).bind(target);
            }
            return async (...args: unknown[]) => {
              if (failing) throw new StoreError('connection reset', { transient: true });
              const answer = await (value as (...a: unknown[]) => Promise<unknown>).apply(
                target,
                args,
              );
              if (key === 'claimDuePosts') looks++;
              return answer;
            };
          },
        });
      const a = await instance({ shared }, blip);
      const { slow, arrived: takenByB, open } = heldSend();
      const b = await instance({ shared, sendHooks: [slow] });

      // when a's send meets the failure, a's claim runs out, b claims the post and sends it
      failing = true;
      const sending = a.bot.send('telegram:3002', 'Your invoice is ready');
      await expect(sending).rejects.toBeInstanceOf(StoreError);
      await takenByB;
      failing = false;
      const from = looks;
      await expect.poll(() => looks, { timeout: 5000 }).toBeGreaterThan(from); // a looked again
      await a.bot.idle();
      open();
      await b.bot.idle();

      // then the post went out once, by b, and is sent
      expect(telegram.sent.filter((sent) => sent.text === 'Your invoice is ready')).toHaveLength(1);
      expect(await a.store.getPosts()).toMatchObject([{ status: 'sent' }]);
    });
  },
);

/** A send hook that holds each send (`arrived` once one came) until `open()` lets it go on. */
function heldSend(): { slow: SendHook; arrived: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let arrive!: () => void;
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  const slow: SendHook = async (post, send) => {
    arrive();
    await opened; // a send that takes as long as the test needs
    return send(post);
  };
  return { slow, arrived, open };
}
