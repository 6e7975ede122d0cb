/**
 * A turn that brings the bot down every time its agent runs (a poison turn): the bot is
 * killed with SIGKILL on each start, restarted, and after `maxRunAttempts` starts it records
 * the run as failed instead of taking the turn up again, and goes on answering others.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { tempDirs } from '../fixtures/temp-dirs.js';
import { ROOT } from './harness.js';

/** A bot on a memory channel whose agent kills its own process when asked about poison. */
const BOT = `
const load = (path) => import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist')).href)} + path);
const { Bot, silentLogger } = await load('/index.js');
const { SqliteConversationStore } = await load('/db/sqlite/index.js');
const { MemoryChannel } = await load('/channels/testing/index.js');
const agent = {
  id: 'support-agent',
  name: 'support-agent',
  async run(message) {
    if (message.content.includes('poison')) process.kill(process.pid, 'SIGKILL');
    return { output: 'answered: ' + message.content };
  },
};
const store = new SqliteConversationStore({ path: process.env.DB });
const channel = new MemoryChannel();
const bot = new Bot({ channels: [channel], agents: [agent], store, logger: silentLogger });
await bot.start();
// Each process numbers its turns from 1: the id is given, so turns of different runs differ.
if (process.env.SAY) await channel.receive(process.env.SAY, { messageId: process.env.SAY });
await bot.idle();
await bot.settled();
console.log(JSON.stringify(channel.sent.map((m) => m.content)));
await bot.stop();
await store.close();
`;

function runBot(db: string, say?: string) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', BOT], {
    env: { ...process.env, DB: db, ...(say !== undefined && { SAY: say }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise<{ signal: NodeJS.Signals | null; code: number | null; out: string }>(
    (resolve) => child.on('exit', (code, signal) => resolve({ code, signal, out })),
  );
}

const dir = tempDirs().make('crash-poison');

describe('a turn that brings the bot down every time', () => {
  it('is taken up maxRunAttempts times, then recorded as failed while the bot answers others', async () => {
    expect(existsSync(join(ROOT, 'dist', 'index.js')), 'run npm run build first').toBe(true);
    const db = join(dir, 'colloquy.db');

    // given a bot killed by its agent on a poison turn, then restarted twice (each restart
    // takes the unfinished run up again and is killed by it again)
    const runs = [await runBot(db, '@support-agent poison')];
    runs.push(await runBot(db), await runBot(db));

    // when it starts a fourth time and a person asks something else
    const fourth = await runBot(db, '@support-agent hello');

    // then the first three runs were killed, the fourth did not take the turn up again and
    // answered the new one
    expect(runs.map((run) => run.signal)).toEqual(['SIGKILL', 'SIGKILL', 'SIGKILL']);
    expect(fourth.code, fourth.out).toBe(0);
    expect(JSON.parse(fourth.out.trim().split('\n').at(-1)!)).toEqual([
      'answered: @support-agent hello',
    ]);
    // and the poison turn is stored, its run failed after three starts, with why
    const file = new Database(db, { readonly: true });
    const rows = file
      .prepare(
        `SELECT m.content, r.status, r.attempts, r.error FROM agent_runs r
         JOIN messages m ON m.id = r.message_id ORDER BY r.created_at`,
      )
      .all();
    file.close();
    expect(rows).toEqual([
      {
        content: '@support-agent poison',
        status: 'failed',
        attempts: 3,
        error:
          'not resumed: the agent was started 3 times on this turn and the bot stopped each time (maxRunAttempts 3)',
      },
      { content: '@support-agent hello', status: 'answered', attempts: 1, error: null },
    ]);
  });
});
