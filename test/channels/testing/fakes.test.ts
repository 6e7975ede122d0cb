import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { FakeDiscord, FakeSlack, FakeTelegram } from 'colloquy/testing';

// What the fakes count as acknowledged and what they replay: the crash tests (test/crash/)
// compare these records with the database, so they must be exact.

/** A local HTTP endpoint answering each request with the next status (0: drop the connection). */
async function endpoint(statuses: number[]) {
  const seen: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(req.headers);
      const status = statuses.shift() ?? 200;
      if (status === 0) return void req.socket.destroy();
      res.writeHead(status).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, seen, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** Resolves once `condition` holds, checking every few milliseconds. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

const chat = { id: 1001, type: 'private' as const, first_name: 'Ada' };
const ada = { id: 1001, is_bot: false, first_name: 'Ada' };
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe('FakeTelegram bookkeeping', () => {
  it('counts a polled update acknowledged only once a later offset covers it', async () => {
    // Given three queued updates
    const telegram = await FakeTelegram.start();
    closers.push(() => telegram.close());
    for (const text of ['a', 'b', 'c']) telegram.sendUserMessage({ chat, from: ada, text });
    const getUpdates = async (offset: number) => {
      const response = await fetch(`${telegram.apiRoot}/bot${telegram.token}/getUpdates`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ offset, timeout: 0 }),
      });
      return ((await response.json()) as { result: { update_id: number }[] }).result;
    };

    // When the bot fetches them, then confirms the first two with offset 3
    expect((await getUpdates(0)).map((update) => update.update_id)).toEqual([1, 2, 3]);
    expect(telegram.acknowledged).toEqual([]);
    expect((await getUpdates(3)).map((update) => update.update_id)).toEqual([3]);

    // Then those two are acknowledged, and the third is delivered again until confirmed
    expect(telegram.acknowledged.map((update) => update.update_id)).toEqual([1, 2]);
  });

  it('pushes updates to the webhook and delivers again those not answered 2xx', async () => {
    // Given a webhook that fails twice (a 500, then a dropped connection) and then answers 200
    const hook = await endpoint([500, 0]);
    closers.push(hook.close);
    const telegram = await FakeTelegram.start({ webhookDelivery: { retryMs: 10 } });
    closers.push(() => telegram.close());
    await fetch(`${telegram.apiRoot}/bot${telegram.token}/setWebhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: hook.url, secret_token: 's3cret' }),
    });

    // When a person writes
    const { update } = telegram.sendUserMessage({ chat, from: ada, text: 'hello' });
    await until(() => telegram.acknowledged.length === 1);

    // Then the update was posted three times with the secret, and acknowledged once
    expect(hook.seen).toHaveLength(3);
    expect(hook.seen.map((headers) => headers['x-telegram-bot-api-secret-token'])).toEqual([
      's3cret',
      's3cret',
      's3cret',
    ]);
    expect(telegram.acknowledged).toEqual([update]);
  });

  it('sends steady traffic until stopped', async () => {
    // Given traffic of 200 messages a second
    const telegram = await FakeTelegram.start();
    closers.push(() => telegram.close());
    const traffic = telegram.traffic(200, (i) => ({ chat, from: ada, text: `#${i}` }));

    // When it is stopped after ten
    await until(() => traffic.sent >= 10);
    await traffic.stop();
    const sent = traffic.sent;
    await new Promise((resolve) => setTimeout(resolve, 50));

    // Then exactly what it sent is queued, in order, and nothing more came after stop
    const response = await fetch(`${telegram.apiRoot}/bot${telegram.token}/getUpdates`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeout: 0, limit: 100 }),
    });
    const { result } = (await response.json()) as { result: { message: { text: string } }[] };
    expect(result.map((update) => update.message.text)).toEqual(
      Array.from({ length: sent }, (_, i) => `#${i}`),
    );
  });
});

describe('FakeSlack bookkeeping', () => {
  it('retries an unacknowledged event with X-Slack-Retry-Num until it is answered 2xx', async () => {
    // Given events that fail with a 500 and a dropped connection before a 200
    const hook = await endpoint([500, 0]);
    closers.push(hook.close);
    const slack = await FakeSlack.start({ retries: { delaysMs: [5, 5, 5] }, eventsUrl: hook.url });
    closers.push(() => slack.close());

    // When a person writes
    const { event, delivery } = await slack.message({
      channel: 'C0GENERAL',
      user: 'U0ALICE',
      text: 'hi',
    });

    // Then Slack delivered it three times, the retries numbered, and counts it acknowledged once
    expect(hook.seen.map((headers) => headers['x-slack-retry-num'])).toEqual([undefined, '1', '2']);
    expect(hook.seen.map((headers) => headers['x-slack-retry-reason'])).toEqual([
      undefined,
      'http_error',
      'connection_failed',
    ]);
    expect(delivery).toMatchObject({ status: 200, retryNum: 2 });
    expect(slack.deliveries.map((d) => d.status)).toEqual([500, 0, 200]);
    expect(slack.acknowledged).toEqual([{ eventId: delivery.eventId, event }]);
  });

  it('gives up after the last retry and counts nothing acknowledged', async () => {
    const hook = await endpoint([500, 500, 500]);
    closers.push(hook.close);
    const slack = await FakeSlack.start({ retries: { delaysMs: [5, 5] }, eventsUrl: hook.url });
    closers.push(() => slack.close());

    const { delivery } = await slack.message({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'hi' });

    expect(delivery).toMatchObject({ status: 500, retryNum: 2 });
    expect(slack.acknowledged).toEqual([]);
  });
});

describe('FakeDiscord bookkeeping', () => {
  /** A raw gateway client: the frames it received, and a way to send one. */
  async function connect(discord: FakeDiscord) {
    const ws = new WebSocket(discord.gatewayUrl);
    const frames: { op: number; s?: number; t?: string; d?: unknown }[] = [];
    ws.on('message', (data) => frames.push(JSON.parse(String(data)) as (typeof frames)[number]));
    await once(ws, 'open');
    await until(() => frames.some((frame) => frame.op === 10));
    const closed = once(ws, 'close');
    return {
      frames,
      send: (frame: object) => ws.send(JSON.stringify(frame)),
      close: async () => {
        ws.terminate();
        await closed;
      },
    };
  }

  it('counts dispatches delivered only on an identified connection, and replays them on RESUME', async () => {
    // Given a client that identified and saw one event
    const discord = await FakeDiscord.start();
    closers.push(() => discord.close());
    const first = await connect(discord);
    first.send({ op: 2, d: { token: discord.token, intents: 0, properties: {} } });
    await until(() => first.frames.some((frame) => frame.t === 'READY'));
    const ready = first.frames.find((frame) => frame.t === 'READY')!;
    const sessionId = (ready.d as { session_id: string }).session_id;
    discord.dispatch('TEST_EVENT', { n: 1 });
    await until(() => first.frames.some((frame) => frame.t === 'TEST_EVENT'));
    const seen = first.frames.at(-1)!.s!;

    // When it dies, two events happen meanwhile, and a new connection RESUMEs the session
    await first.close();
    discord.dispatch('TEST_EVENT', { n: 2 });
    discord.dispatch('TEST_EVENT', { n: 3 });
    expect(discord.delivered.map((event) => event.d)).not.toContainEqual({ n: 2 });
    const second = await connect(discord);
    closers.push(second.close);
    second.send({ op: 6, d: { token: discord.token, session_id: sessionId, seq: seen } });
    await until(() => second.frames.some((frame) => frame.t === 'RESUMED'));

    // Then the missed events arrive in order before RESUMED, and count as delivered
    expect(second.frames.filter((frame) => frame.op === 0).map((frame) => frame.d)).toEqual([
      { n: 2 },
      { n: 3 },
      {},
    ]);
    expect(discord.delivered.filter((e) => e.t === 'TEST_EVENT').map((e) => e.d)).toEqual([
      { n: 1 },
      { n: 2 },
      { n: 3 },
    ]);
  });

  it('answers INVALID_SESSION to a RESUME of a session it does not know', async () => {
    const discord = await FakeDiscord.start();
    closers.push(() => discord.close());
    const client = await connect(discord);
    closers.push(client.close);
    client.send({ op: 6, d: { token: discord.token, session_id: 'nope', seq: 3 } });
    await until(() => client.frames.some((frame) => frame.op === 9));
    expect(discord.dispatch('TEST_EVENT', {})).toBe(0); // no session: nothing is sent
    expect(discord.delivered).toEqual([]);
  });
});
