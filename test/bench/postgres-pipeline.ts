import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Chat, User } from 'grammy/types';
import pg from 'pg';
import { FakeTelegram } from '../../channels/testing/index.js';
import { type BotRun, freePort, scratch, startBot, stopBot } from '../crash/harness.js';
import { int, line, note, verdict } from './report.js';
import type { Outcome } from './store.js';

const SECRET = 'bench-webhook-secret';

/**
 * The whole pipeline on Postgres with one bot instance and with two. The built
 * Telegram example runs as separate processes in webhook mode on one database (shared, as a
 * `postgres://` COLLOQUY_DB makes it), with the offline model; FakeTelegram posts `events`
 * updates from `senders` people at once (each waiting for its 200), spread over the instances,
 * and the time runs until every reply was sent. Needs `npm run build`.
 */
export async function benchPostgresPipeline(options: {
  events: number;
  senders: number;
}): Promise<Outcome[]> {
  const server =
    process.env.COLLOQUY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  console.log(
    `\n── pipeline on Postgres: ${int(options.events)} webhook updates, one instance vs two ──`,
  );
  const one = await measure(server, options, 1);
  const two = await measure(server, options, 2);
  const ratio = two / one;
  const pass = ratio >= 1.6;
  console.log(
    line(
      'two instances',
      `${int(two)} updates/s`,
      `one instance ${int(one)} updates/s`,
      `${ratio.toFixed(2)}× (target ≥ 1.6×) ${verdict(pass)}`,
    ),
  );
  console.log(
    note(
      `${options.senders} senders, each in its own DM, spread over the instances; the bots, ` +
        'Postgres and this process share the machine',
    ),
  );
  return [
    {
      label: `Postgres: pipeline with two instances ${ratio.toFixed(2)}× one (target ≥ 1.6×)`,
      pass,
    },
  ];
}

/** Updates per second through `instances` bot processes on a fresh database. */
async function measure(
  server: string,
  options: { events: number; senders: number },
  instances: number,
): Promise<number> {
  const name = `colloquy_bench_pipeline_${process.pid}_${instances}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = Object.assign(new URL(server), { pathname: `/${name}` }).toString();
  const telegram = await FakeTelegram.start({ bot: { username: 'colloquy_bench_bot' } });
  const dir = scratch(`pipeline-${instances}`);
  const runs: BotRun[] = [];
  try {
    const urls: string[] = [];
    for (let i = 0; i < instances; i++) {
      const port = await freePort();
      const webhook = `http://127.0.0.1:${port}/telegram`;
      urls.push(webhook);
      runs.push(
        startBot({
          example: 'telegram-bot',
          env: {
            COLLOQUY_DB: url,
            TELEGRAM_BOT_TOKEN: telegram.token,
            TELEGRAM_API_ROOT: telegram.apiRoot,
            TELEGRAM_WEBHOOK_URL: webhook,
            TELEGRAM_WEBHOOK_SECRET: SECRET,
            PORT: String(port),
          },
          readyLine: /receives updates at/,
          logFile: join(dir, 'runs.log'),
        }),
      );
    }
    if (!(await Promise.all(runs.map((run) => run.ready))).every(Boolean)) {
      throw new Error(`a bot did not start; see ${dir}/runs.log`);
    }
    await send(telegram, urls, 200, options.senders, 0); // warm-up
    const start = performance.now();
    await send(telegram, urls, options.events, options.senders, 200);
    return (options.events / (performance.now() - start)) * 1000;
  } finally {
    for (const run of runs) await stopBot(run);
    await telegram.close();
    await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin.end();
  }
}

/** `count` updates from `senders` people at once; resolves once every one was answered. */
async function send(
  telegram: FakeTelegram,
  urls: string[],
  count: number,
  senders: number,
  offset: number,
): Promise<void> {
  const replies = telegram.sent.length;
  await Promise.all(
    Array.from({ length: senders }, async (_, s) => {
      const from: User = { id: 3001 + s, is_bot: false, first_name: `Sender ${s + 1}` };
      const chat: Chat = { id: from.id, type: 'private', first_name: from.first_name };
      const url = urls[s % urls.length]!;
      for (let k = s; k < count; k += senders) {
        const text = `Hi, where is my order ${offset + k}?`;
        const message = telegram.buildMessage({ chat, from, text });
        const { status } = await telegram.postWebhook(url, { message }, SECRET);
        if (status !== 200) throw new Error(`the webhook answered ${status}`);
      }
    }),
  );
  const deadline = performance.now() + 120_000;
  while (telegram.sent.length < replies + count) {
    if (performance.now() > deadline) throw new Error('replies did not all arrive');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
