import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { Chat, User } from 'grammy/types';
import { LogLevel } from '@slack/bolt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Bot, silentLogger } from 'colloquy';
import type { Agent, Channel, ColloquyError } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { SlackChannel } from 'colloquy/slack';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeSlack, FakeTelegram } from 'colloquy/testing';
import { deferred, scriptedAgent } from './bot.fixtures.js';
import { gatedStore } from '../../fixtures/gated-store.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const adaDm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };

/** Every platform is told about an event only once its turn is in the database file. */
describe('acknowledge after commit', () => {
  let dir: string;
  let dbPath: string;
  let sqlite: SqliteConversationStore;
  let gated: ReturnType<typeof gatedStore<SqliteConversationStore>>;
  let bot: Bot | undefined;
  let errors: ColloquyError[];
  let release: (() => void) | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'colloquy-ack-'));
    dbPath = join(dir, 'colloquy.db');
    sqlite = new SqliteConversationStore({ path: dbPath });
    gated = gatedStore(sqlite);
    errors = [];
    bot = undefined;
  });

  afterEach(async () => {
    release?.();
    gated.state.failing = false;
    await bot?.stop();
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function startBot(channel: Channel, agents: Agent[] = []): Promise<Bot> {
    bot = new Bot({
      channels: [channel],
      agents,
      store: gated.store,
      logger: silentLogger,
      capture: { retryBaseMs: 5, retryMaxMs: 20 },
    });
    bot.catch((error) => void errors.push(error));
    await bot.start();
    return bot;
  }

  /** What another process reading the database file sees. */
  function storedIds(): string[] {
    const db = new Database(dbPath, { readonly: true });
    try {
      return db.prepare('SELECT id FROM messages ORDER BY seq').pluck().all() as string[];
    } finally {
      db.close();
    }
  }

  /** Settles with `promise`'s fate, or `'pending'` if it has none after other I/O had its turn. */
  async function state(promise: Promise<unknown>): Promise<'pending' | 'settled'> {
    let settled = false;
    void promise.then(
      () => (settled = true),
      () => (settled = true),
    );
    await sleep(20);
    return settled ? 'settled' : 'pending';
  }

  describe('Telegram webhook', () => {
    let telegram: FakeTelegram;
    let url: string;

    beforeEach(async () => {
      telegram = await FakeTelegram.start();
      const channel = new TelegramChannel({
        token: telegram.token,
        botInfo: telegram.botInfo,
        client: { apiRoot: telegram.apiRoot },
        mode: 'webhook',
        webhook: { secretToken: 's3cret', port: 0, host: '127.0.0.1' },
        retry: { baseDelayMs: 5 },
      });
      await startBot(channel, [scriptedAgent('support-agent', () => 'on it')]);
      url = `http://127.0.0.1:${channel.webhookPort}/telegram`;
    });

    afterEach(async () => {
      release?.();
      await bot?.stop();
      await telegram.close();
    });

    it('answers 200 only once the turn is in the database file', async () => {
      // given a store that holds its writes
      const held = gated.hold();
      release = held.release;
      const message = telegram.buildMessage({ chat: adaDm, from: ada, text: 'where is 4711?' });

      // when Telegram posts the update
      const response = telegram.postWebhook(url, { update_id: 7, message }, 's3cret');

      // then no answer goes out while the write is held
      await held.arrived;
      expect(await state(response)).toBe('pending');

      // and once it is committed, the 200 comes, with the row already in the file
      held.release();
      expect((await response).status).toBe(200);
      expect(storedIds()).toContain(`telegram:1001:${message.message_id}`);
    });

    it('answers 500 when the store fails, and takes the redelivery once it works again', async () => {
      // given a store that fails
      gated.state.failing = true;
      const message = telegram.buildMessage({ chat: adaDm, from: ada, text: 'hello?' });

      // when Telegram posts the update
      const first = await telegram.postWebhook(url, { update_id: 8, message }, 's3cret');

      // then it is not acknowledged
      expect(first.status).toBe(500);
      expect(storedIds()).toEqual([]);

      // and when the store recovers, Telegram's redelivery is answered 200, stored and answered once
      gated.state.failing = false;
      await until(() => bot!.captureStats?.waiting === 0);
      const again = await telegram.postWebhook(url, { update_id: 8, message }, 's3cret');
      expect(again.status).toBe(200);
      await bot!.idle();
      expect(storedIds().filter((id) => id === `telegram:1001:${message.message_id}`)).toHaveLength(
        1,
      );
      expect(telegram.sent.map((sent) => sent.text)).toEqual(['on it']);
    });

    it('refuses the redeliveries of a turn capture still holds without queueing it again', async () => {
      // given a store that fails, and an update refused once
      gated.state.failing = true;
      const message = telegram.buildMessage({ chat: adaDm, from: ada, text: 'anyone there?' });
      const update = { update_id: 9, message };
      expect((await telegram.postWebhook(url, update, 's3cret')).status).toBe(500);
      const waiting = bot!.captureStats!.waiting;

      // when Telegram delivers it again and again while the store is away
      for (let i = 0; i < 20; i++) {
        expect((await telegram.postWebhook(url, update, 's3cret')).status).toBe(500);
      }

      // then capture holds the one append (and its run) it held after the first delivery
      expect(bot!.captureStats!.waiting).toBe(waiting);

      // and once the store is back, the next delivery is taken, stored once and answered once
      gated.state.failing = false;
      await until(() => bot!.captureStats?.waiting === 0);
      expect((await telegram.postWebhook(url, update, 's3cret')).status).toBe(200);
      await bot!.idle();
      const id = `telegram:1001:${message.message_id}`;
      expect(storedIds().filter((stored) => stored === id)).toHaveLength(1);
      expect(telegram.sent.map((sent) => sent.text)).toEqual(['on it']);
    });
  });

  describe('Telegram long polling', () => {
    let telegram: FakeTelegram;

    beforeEach(async () => {
      telegram = await FakeTelegram.start();
    });

    afterEach(async () => {
      release?.();
      await bot?.stop();
      await telegram.close();
    });

    function channel(options: { maxUnprocessed?: number } = {}): TelegramChannel {
      return new TelegramChannel({
        token: telegram.token,
        botInfo: telegram.botInfo,
        client: { apiRoot: telegram.apiRoot },
        pollingTimeoutSeconds: 1,
        retry: { baseDelayMs: 5 },
        ...options,
      });
    }

    /** The offsets the bot confirmed with, in order. */
    const offsets = () =>
      telegram.calls
        .filter((call) => call.method === 'getUpdates' && call.payload.offset !== undefined)
        .map((call) => Number(call.payload.offset));

    it('confirms an update with the next offset only once its turn is committed', async () => {
      // given a polling bot whose store holds its writes
      await startBot(channel());
      const held = gated.hold();
      release = held.release;

      // when an update arrives
      const { update, message } = telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'hi' });
      await held.arrived;

      // then no getUpdates confirms it while the write is held
      await sleep(20);
      expect(offsets().filter((offset) => offset > update.update_id)).toEqual([]);

      // and once committed, the next getUpdates confirms it, with the row in the file
      held.release();
      await until(() => offsets().some((offset) => offset > update.update_id));
      expect(storedIds()).toContain(`telegram:1001:${message.message_id}`);
    });

    it('fetches a failed update again instead of confirming it, and stores it once', async () => {
      // given a polling bot whose store fails
      gated.state.failing = true;
      await startBot(channel());

      // when two updates arrive while it fails
      const one = telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'one' });
      const two = telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'two' });
      await until(() => gated.state.writes >= 2);

      // then neither is confirmed
      expect(offsets().filter((offset) => offset > one.update.update_id)).toEqual([]);

      // and once the store works, both are stored once each and confirmed
      gated.state.failing = false;
      await until(() => offsets().some((offset) => offset > two.update.update_id));
      await bot!.idle();
      const ids = storedIds();
      expect(ids.filter((id) => id.endsWith(`:${one.message.message_id}`))).toHaveLength(1);
      expect(ids.filter((id) => id.endsWith(`:${two.message.message_id}`))).toHaveLength(1);
    });

    it('fetches no more updates while maxUnprocessed turns are still being answered', async () => {
      // given an agent that holds every answer, and room for 2 unprocessed updates
      const answering = deferred();
      const agent = scriptedAgent('support-agent', async () => {
        await answering.promise;
        return 'done';
      });
      release = () => answering.resolve();
      await startBot(channel({ maxUnprocessed: 2 }), [agent]);

      // when two updates are taken and their answers are held
      telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'one' });
      telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'two' });
      await until(() => agent.runs.length === 1);
      const fetches = telegram.calls.filter((call) => call.method === 'getUpdates').length;

      // then a third update waits at Telegram, not in the process
      const third = telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'three' });
      await sleep(50);
      expect(telegram.calls.filter((call) => call.method === 'getUpdates')).toHaveLength(fetches);
      expect(storedIds()).not.toContain(`telegram:1001:${third.message.message_id}`);

      // and once the answers go out, it is fetched and answered
      answering.resolve();
      await telegram.waitForSent(3);
      expect(storedIds()).toContain(`telegram:1001:${third.message.message_id}`);
    });
  });

  describe('Slack', () => {
    let slack: FakeSlack;

    beforeEach(async () => {
      slack = await FakeSlack.start();
    });

    afterEach(async () => {
      release?.();
      await bot?.stop();
      await slack.close();
    });

    function slackChannel(socketMode: boolean): SlackChannel {
      return new SlackChannel({
        token: slack.token,
        ...(socketMode ? { appToken: slack.appToken } : { signingSecret: slack.signingSecret }),
        port: 0,
        host: '127.0.0.1',
        logLevel: LogLevel.ERROR,
        clientOptions: {
          slackApiUrl: slack.slackApiUrl,
          retryConfig: { retries: 0 },
        },
      });
    }

    it('answers an HTTP event only once its turn is in the database file', async () => {
      // given a bot whose store holds its writes
      const channel = slackChannel(false);
      await startBot(channel);
      slack.eventsUrl = channel.eventsUrl;
      const held = gated.hold();
      release = held.release;

      // when Slack posts an event
      const ts = slack.nextTs();
      const delivery = slack.message({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'hi', ts });

      // then no answer goes out while the write is held
      await held.arrived;
      expect(await state(delivery)).toBe('pending');

      // and the 200 comes once it is committed
      held.release();
      expect((await delivery).delivery.status).toBe(200);
      expect(storedIds()).toContain(`slack:T0FAKE:C0GENERAL:${ts}`);
    });

    it('answers 500 when the store fails, and stores the retry once', async () => {
      // given a bot whose store fails
      const channel = slackChannel(false);
      await startBot(channel);
      slack.eventsUrl = channel.eventsUrl;
      gated.state.failing = true;

      // when Slack posts an event
      const ts = slack.nextTs();
      const event = { type: 'message', channel: 'C0GENERAL', user: 'U0ALICE', text: 'hi', ts };
      const first = await slack.sendEvent(event, { eventId: 'Ev0ACK' });

      // then it is not acknowledged
      expect(first.status).toBe(500);

      // and Slack's retry, once the store works, is acknowledged and stored once
      gated.state.failing = false;
      await until(() => bot!.captureStats?.waiting === 0);
      const retry = await slack.sendEvent(event, { eventId: 'Ev0ACK', retryNum: 1 });
      expect(retry.status).toBe(200);
      await bot!.idle();
      expect(storedIds().filter((id) => id.endsWith(ts))).toHaveLength(1);
    });

    it('acks a Socket Mode envelope only once its turn is committed', async () => {
      // given a Socket Mode bot whose store holds its writes
      await startBot(slackChannel(true));
      await slack.waitForSocket();
      const held = gated.hold();
      release = held.release;

      // when Slack sends an envelope
      const ts = slack.nextTs();
      const delivery = slack.message({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'hi', ts });

      // then no ack goes out while the write is held
      await held.arrived;
      expect(await state(delivery)).toBe('pending');
      expect(slack.acks).toEqual([]);

      // and the ack comes once it is committed
      held.release();
      await delivery;
      expect(slack.acks).toHaveLength(1);
      expect(storedIds()).toContain(`slack:T0FAKE:C0GENERAL:${ts}`);
    });

    it('does not ack a Socket Mode envelope whose commit failed, and stores the redelivery once', async () => {
      // given a Socket Mode bot whose store fails
      await startBot(slackChannel(true));
      await slack.waitForSocket();
      gated.state.failing = true;

      // when Slack sends an envelope
      const ts = slack.nextTs();
      const event = { type: 'message', channel: 'C0GENERAL', user: 'U0ALICE', text: 'hi', ts };
      const first = slack.sendEvent(event, { eventId: 'Ev0SOCK' });

      // then the failed commit is reported and no ack goes out
      await until(() => gated.state.writes > 0);
      await until(() => errors.some((error) => error.name === 'StoreError'));
      expect(await state(first)).toBe('pending');
      expect(slack.acks).toEqual([]);

      // and Slack's redelivery, once the store works, is acked and stored once
      gated.state.failing = false;
      await until(() => bot!.captureStats?.waiting === 0);
      const retry = await slack.sendEvent(event, { eventId: 'Ev0SOCK', retryNum: 1 });
      expect(retry.status).toBe(200);
      expect(slack.acks).toHaveLength(1);
      await bot!.idle();
      expect(storedIds().filter((id) => id.endsWith(ts))).toHaveLength(1);
    });
  });
});

/** Resolves once `condition` holds, looking after each pass of the event loop. */
async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}
