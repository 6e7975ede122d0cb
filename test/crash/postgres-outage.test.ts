import { createServer, connect } from 'node:net';
import type { Server, Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeTelegram } from 'colloquy/testing';
import {
  dropTestDatabases,
  postgresReachable,
  testDatabase,
} from '../db/postgres/postgres.fixtures.js';
import {
  compare,
  drain,
  everyAddressedAnswered,
  freePort,
  printCounts,
  scratch,
  startBot,
  stopBot,
} from './harness.js';
import { telegramRecord, telegramTraffic } from './platforms.js';
import { readPostgres } from './postgres.js';

// The database goes away under traffic ("a locked, full, read-only or corrupt
// database"): a bot on Postgres reaches it through a TCP proxy that is cut for two seconds,
// every connection dropped and new ones refused. The bot keeps running; what Telegram
// delivered meanwhile is refused (not acknowledged) and delivered again; afterwards the
// database holds every acknowledged update and every reply, none answered twice.
// Runs the built example: `npm run build` first.

/** A TCP proxy on 127.0.0.1 to `port` that can drop every connection and refuse new ones. */
async function proxy(
  port: number,
): Promise<{ port: number; cut(ms: number): void; close(): void }> {
  const sockets = new Set<Socket>();
  let down = false;
  const server: Server = createServer((client) => {
    if (down) return void client.destroy();
    const upstream = connect(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    cut(ms) {
      down = true;
      for (const socket of sockets) socket.destroy();
      setTimeout(() => (down = false), ms).unref();
    },
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

describe.skipIf(!postgresReachable)('a bot on Postgres while the database goes away', () => {
  afterAll(dropTestDatabases);
  let url = '';
  beforeAll(async () => {
    url = await testDatabase();
  });

  it('loses nothing acknowledged, and answers everything once', async () => {
    const database = new URL(url);
    const tunnel = await proxy(Number(database.port || 5432));
    const viaTunnel = Object.assign(new URL(url), { port: String(tunnel.port) }).toString();
    const telegram = await FakeTelegram.start({ webhookDelivery: { retryMs: 200 } });
    const port = await freePort();
    const dir = scratch('postgres-outage');
    const run = startBot({
      example: 'telegram-bot',
      env: {
        COLLOQUY_DB: viaTunnel,
        TELEGRAM_BOT_TOKEN: telegram.token,
        TELEGRAM_API_ROOT: telegram.apiRoot,
        TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${port}/telegram`,
        TELEGRAM_WEBHOOK_SECRET: 'outage-test-secret',
        PORT: String(port),
      },
      readyLine: /receives updates at/,
      logFile: join(dir, 'runs.log'),
    });
    try {
      expect(await run.ready).toBe(true);
      const rate = 10;
      const traffic = telegramTraffic(telegram, rate);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      tunnel.cut(2000);
      await new Promise((resolve) => setTimeout(resolve, 4000));
      await traffic.stop();
      // Until every update is acknowledged and every addressed turn answered (a graceful stop
      // leaves a turn it has not begun to answer pending for the next start). A commit can take
      // seconds on a loaded machine: the quiet time that ends the wait is longer than that.
      await drain(
        () =>
          telegram.acknowledged.length >= traffic.sent &&
          everyAddressedAnswered(telegramRecord(telegram)),
        () => telegram.acknowledged.length + telegram.sent.length,
        { quietMs: 15_000 },
      );
      const finalStop = await stopBot(run);
      const counts = compare(telegramRecord(telegram), await readPostgres(url), {
        path: 'Telegram webhook on Postgres, database cut for 2 s',
        rate,
        sent: traffic.sent,
        finalStop,
        kills: { kills: 0, beforeReady: 0, unexpectedExits: [] },
      });
      printCounts(counts, 0, `runs' output: ${dir}`);
      // The outage was felt: deliveries were refused while the database was away.
      expect(readFileSync(join(dir, 'runs.log'), 'utf8')).toContain('not committed yet');
      expect(counts.acknowledged).toBe(traffic.sent);
      expect({
        acknowledgedMissing: counts.acknowledgedMissing,
        repliesMissing: counts.repliesMissing,
        repliesWithoutIdNotUnconfirmed: counts.repliesWithoutId - counts.repliesUnconfirmed,
        answeredTwice: counts.answeredTwice,
        unanswered: counts.unanswered,
        finalStop,
      }).toEqual({
        acknowledgedMissing: 0,
        repliesMissing: 0,
        repliesWithoutIdNotUnconfirmed: 0,
        answeredTwice: 0,
        unanswered: 0,
        finalStop: 'exit 0',
      });
    } finally {
      run.child.kill('SIGKILL');
      tunnel.close();
      await telegram.close();
    }
  }, 120_000);
});
