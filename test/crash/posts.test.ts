import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeDiscord, FakeTelegram } from 'colloquy/testing';
import { crashSeed, scratch, seededRandom } from './harness.js';

// Posts the bot starts are never lost and never sent twice: a bot that keeps posting (each
// post now, or due a moment later) runs as a child process against a loopback fake and is
// SIGKILLed at random moments, restarted each time; a last run sends nothing new and stops once
// nothing is pending. Then every post stored in the queue went out once (Discord: a post cut
// off between the platform call and its confirmation is settled by its nonce and recorded with
// its platform id) or, on Telegram, which cannot tell, is recorded unconfirmed and sent at most
// once; and the platform has no post the record lacks. Runs the built dist: `npm run build` first.

const KILLS = Number(process.env.CRASH_KILLS ?? 3);
const CHILD = join(import.meta.dirname, 'post-bot.mjs');
const GUILD = '81384788765712384';
const GENERAL = '290926798999357250';

interface Run {
  ready: Promise<boolean>;
  exited: Promise<unknown>;
  kill(signal: NodeJS.Signals): void;
}

function startRun(env: Record<string, string>, log: string[]): Run {
  const child = spawn(process.execPath, [CHILD], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const ready = new Promise<boolean>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(true);
    });
    child.stderr.on('data', (chunk: Buffer) => void log.push(chunk.toString()));
    child.once('exit', () => resolve(false));
  });
  return { ready, exited, kill: (signal) => child.kill(signal) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Kills the posting bot `KILLS` times, then lets a last run deliver what is pending. */
async function crashAndDrain(env: Record<string, string>, log: string[]): Promise<void> {
  const random = seededRandom(crashSeed());
  for (let kill = 1; kill <= KILLS; kill++) {
    const run = startRun({ ...env, POSTS_RUN: String(kill) }, log);
    expect(await run.ready).toBe(true);
    await sleep(200 + random() * 1300);
    run.kill('SIGKILL');
    await run.exited;
  }
  const last = startRun({ ...env, POSTS_RUN: 'last', POSTS_SEND: '0' }, log);
  expect(await last.ready).toBe(true);
  const deadline = Date.now() + 20_000;
  while (pending(env.COLLOQUY_DB!) > 0 && Date.now() < deadline) await sleep(100);
  last.kill('SIGTERM');
  await last.exited;
}

function pending(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare(`SELECT count(*) FROM scheduled_posts WHERE status = 'pending'`)
      .pluck()
      .get() as number;
  } finally {
    db.close();
  }
}

/** The queue's posts (text → status) and their recorded turns (text → platform id, delivery). */
function recorded(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    const posts = db
      .prepare(`SELECT json_extract(message, '$.content') AS text, status FROM scheduled_posts`)
      .all() as { text: string; status: string }[];
    const turns = db
      .prepare(
        `SELECT content AS text, platform_message_id AS platformId, delivery FROM messages
         WHERE json_extract(metadata, '$.origin') = 'post'`,
      )
      .all() as { text: string; platformId: string | null; delivery: string }[];
    return { posts, turns: new Map(turns.map((turn) => [turn.text, turn])) };
  } finally {
    db.close();
  }
}

/** Each text and how many times the platform got it. */
function counted(texts: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const text of texts) counts.set(text, (counts.get(text) ?? 0) + 1);
  return counts;
}

describe('posts the bot starts, with the bot killed at random moments', () => {
  let log: string[];
  beforeAll(() => {
    log = [];
  });
  afterAll(() => {
    if (log.length > 0) console.log(log.join('').slice(-2000));
  });

  it('on Discord: every stored post went out exactly once, recorded with its platform id', async () => {
    const discord = await FakeDiscord.start({ answerDelayMs: [0, 300] });
    discord.addGuild({ id: GUILD, name: 'Test', channels: [{ id: GENERAL, name: 'general' }] });
    const file = join(scratch('posts-discord'), 'colloquy.db');
    try {
      await crashAndDrain(
        {
          COLLOQUY_DB: file,
          DISCORD_TOKEN: discord.token,
          DISCORD_API_URL: discord.restApi,
          POSTS_CONVERSATION: `discord:${GUILD}:${GENERAL}`,
        },
        log,
      );
      const { posts, turns } = recorded(file);
      const platform = counted(discord.posted.map((message) => message.content));
      expect(posts.length).toBeGreaterThan(KILLS);
      for (const { text, status } of posts) {
        expect({ text, status, times: platform.get(text) }).toEqual({
          text,
          status: 'sent',
          times: 1,
        });
        const id = discord.posted.find((message) => message.content === text)?.id;
        expect(turns.get(text)).toEqual({ text, platformId: id, delivery: 'sent' });
      }
      expect(platform.size).toBe(posts.length); // nothing posted that the record lacks
    } finally {
      await discord.close();
    }
  }, 120_000);

  it('on Telegram: every stored post went out once or is recorded unconfirmed, none twice', async () => {
    const telegram = await FakeTelegram.start();
    const file = join(scratch('posts-telegram'), 'colloquy.db');
    try {
      await crashAndDrain(
        {
          COLLOQUY_DB: file,
          POSTS_PLATFORM: 'telegram',
          TELEGRAM_TOKEN: telegram.token,
          TELEGRAM_API_ROOT: telegram.apiRoot,
          POSTS_CONVERSATION: 'telegram:1001',
        },
        log,
      );
      const { posts, turns } = recorded(file);
      const platform = counted(telegram.sent.map((sent) => sent.text));
      expect(posts.length).toBeGreaterThan(KILLS);
      for (const { text, status } of posts) {
        const times = platform.get(text) ?? 0;
        expect(times).toBeLessThanOrEqual(1);
        if (status === 'sent') expect(times).toBe(1);
        else
          expect({ text, status, delivery: turns.get(text)?.delivery }).toEqual({
            text,
            status: 'unconfirmed',
            delivery: 'unconfirmed',
          });
      }
      expect(platform.size).toBeLessThanOrEqual(posts.length);
      for (const text of platform.keys())
        expect(posts.some((post) => post.text === text)).toBe(true);
    } finally {
      await telegram.close();
    }
  }, 120_000);
});
