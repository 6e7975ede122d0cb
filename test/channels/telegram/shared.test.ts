import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Chat, User } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Bot, silentLogger } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';
import { scriptedAgent } from '../../src/bot/bot.fixtures.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const dm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };

describe('Telegram long polling from two instances sharing one store', () => {
  let telegram: FakeTelegram;
  let dir: string;
  const bots: Bot[] = [];
  const stores: SqliteConversationStore[] = [];

  beforeEach(async () => {
    telegram = await FakeTelegram.start();
    dir = mkdtempSync(join(tmpdir(), 'colloquy-poller-'));
  });
  afterEach(async () => {
    for (const bot of bots.splice(0)) await bot.stop();
    for (const store of stores.splice(0)) await store.close();
    await telegram.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function instance(
    wrap: (store: SqliteConversationStore) => SqliteConversationStore = (store) => store,
    channelStopped: () => void = () => {},
  ): Promise<Bot> {
    const store = SqliteConversationStore.open(join(dir, 'colloquy.db'));
    stores.push(store);
    const channel = new TelegramChannel({
      token: telegram.token,
      client: { apiRoot: telegram.apiRoot },
      botInfo: telegram.botInfo,
      pollingTimeoutSeconds: 1,
      retry: { baseDelayMs: 5 },
    });
    const stop = channel.stop.bind(channel);
    channel.stop = () => {
      const stopping = stop(); // polling is told to stop at once
      channelStopped();
      return stopping;
    };
    const bot = new Bot({
      channels: [channel],
      agents: [scriptedAgent('support-agent', (turn) => `re: ${turn.content}`)],
      store: wrap(store),
      logger: silentLogger,
      shared: { leaseTtlMs: 600, claimEveryMs: 200 },
    });
    bots.push(bot);
    await bot.start();
    return bot;
  }

  const polls = () => telegram.calls.filter((call) => call.method === 'getUpdates').length;

  async function until(check: () => boolean): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('polls from one instance at a time, and the standby takes over when the poller stops', async () => {
    // given a first instance polling, then a second one standing by
    const first = await instance();
    await until(() => polls() > 0);
    await instance();
    // when people write, the first instance stops, and people write again
    for (let i = 0; i < 5; i++) telegram.sendUserMessage({ chat: dm, from: ada, text: `q${i}` });
    await until(() => telegram.sent.length === 5);
    await first.stop();
    for (let i = 5; i < 10; i++) telegram.sendUserMessage({ chat: dm, from: ada, text: `q${i}` });
    await until(() => telegram.sent.length === 10);
    // then Telegram never saw two pollers, every update was answered once, in order
    expect(telegram.conflicts).toBe(0);
    expect(telegram.sent.map((sent) => sent.text)).toEqual(
      Array.from({ length: 10 }, (_, i) => `re: q${i}`),
    );
    // and everything acknowledged is stored
    const stored = stores[1]!.db
      .prepare(`SELECT count(*) FROM messages WHERE participant_id = 'telegram:1001'`)
      .pluck()
      .get();
    expect(stored).toBe(10);
    expect(telegram.acknowledged.length).toBeLessThanOrEqual(10);
  });

  it("stops a standby whose stop comes while it takes the poller's lease, and gives the lease back", async () => {
    // given a first instance polling, and a second one whose next try for the poller's lease
    // waits until its channel is told to stop
    const first = await instance();
    await until(() => polls() > 0);
    const poller = `telegram-poller:${telegram.botInfo.id}`;
    let hold = false;
    let arrive!: () => void;
    const arrived = new Promise<void>((resolve) => (arrive = resolve));
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const held = (store: SqliteConversationStore) =>
      new Proxy(store, {
        get(target, key) {
          const value = Reflect.get(target, key) as unknown;
          if (typeof value !== 'function') return value;
          if (key !== 'acquireLease') return (value as () => unknown).bind(target);
          return async (name: string, holder: string, ttlMs: number) => {
            if (hold && name === poller) {
              arrive();
              await opened;
            }
            return target.acquireLease(name, holder, ttlMs);
          };
        },
      });
    const second = await instance(held, () => open());
    hold = true;
    await arrived;

    // when the first instance stops (the lease is free), then the second, which gets the
    // lease it was taking as its stop begins
    await first.stop();
    await second.stop();

    // then the second stopped, and the lease is free for the next instance
    const next = await stores[0]!.acquireLease(poller, 'next', 30_000);
    expect(next).toMatchObject({ name: poller, holder: 'next' });
  });

  it('answers a newer getUpdates by ending the older one with 409, as Telegram does', async () => {
    const url = `${telegram.apiRoot}/bot${telegram.token}/getUpdates`;
    const post = (timeout: number) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ timeout }),
      });
    const older = post(5);
    await until(() => polls() === 1);
    const newer = await post(0);
    expect((await older).status).toBe(409);
    expect(newer.status).toBe(200);
    expect(telegram.conflicts).toBe(1);
  });
});
