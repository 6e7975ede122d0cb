import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { Chat, User } from 'grammy/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAIServer, FakeTelegram } from 'colloquy/testing';
import { scratch, startBot, stopBot, type CrashSetup } from './harness.js';

// A tool approval survives a SIGKILL: the built approval example (dist/examples/approval-bot.js)
// asks Ada to approve a refund with Approve / Deny, is SIGKILLed once its question is recorded,
// and a new process answers her press: the refund runs once and the answer says so.
//
// Runs the built examples: `npm run build` (or `npx tsc -b tsconfig.json`) first.

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const adaDm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };

let model: FakeOpenAIServer;
beforeAll(async () => {
  model = await new FakeOpenAIServer({
    replies: [{ toolCalls: [{ name: 'refund_order', arguments: { orderId: '4242' } }] }],
    fallback: () => 'Refunded order 4242.',
  }).start();
});
afterAll(async () => {
  await model?.close();
});

/** The statuses of the runs recorded in `file` (none while the bot has not written any). */
function runStatuses(file: string): string[] {
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      const rows = db.prepare('SELECT status FROM agent_runs').all() as { status: string }[];
      return rows.map((row) => row.status);
    } finally {
      db.close();
    }
  } catch {
    return [];
  }
}

describe('tool approval across a SIGKILL', () => {
  it('refunds once on an Approve pressed after the bot that asked was killed', async () => {
    const telegram = await FakeTelegram.start();
    const dir = scratch('approval');
    const db = join(dir, 'colloquy.db');
    const setup: CrashSetup = {
      example: 'approval-bot',
      env: {
        TELEGRAM_BOT_TOKEN: telegram.token,
        TELEGRAM_API_ROOT: telegram.apiRoot,
        COLLOQUY_DB: db,
        COLLOQUY_MODEL: 'openai-compatible:fake-model',
        COLLOQUY_MODEL_BASE_URL: model.baseURL,
      },
      readyLine: /is polling for updates/,
      logFile: join(dir, 'bot.log'),
    };
    try {
      const first = startBot(setup);
      expect(await first.ready).toBe(true);
      telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'Please refund order 4242' });
      const [asked] = await telegram.waitForSent(1);
      while (!runStatuses(db).includes('answered')) await sleep(20);
      first.child.kill('SIGKILL');
      expect((await first.exited).signal).toBe('SIGKILL');

      const second = startBot(setup);
      expect(await second.ready).toBe(true);
      const markup = telegram.messageNow(adaDm.id, asked!.message.message_id)?.reply_markup;
      const approve = markup?.inline_keyboard[0]?.[0] as { text: string; callback_data: string };
      expect(approve.text).toBe('Approve');
      telegram.pressButton(asked!.message, ada, approve.callback_data);
      const sent = await telegram.waitForSent(2);
      while (runStatuses(db).filter((s) => s === 'answered').length < 2) await sleep(20);
      expect(await stopBot(second)).toBe('exit 0');

      expect(sent.at(-1)!.text).toBe('Refunded order 4242.');
      const log = readFileSync(setup.logFile, 'utf8');
      expect(log.match(/refunded order 4242/g)).toHaveLength(1);
      const toolResult = model.requests.at(-1)!.messages.find((m) => m.role === 'tool');
      expect(toolResult?.content).toBe('{"refunded":"4242"}');
    } finally {
      await telegram.close();
    }
  }, 60_000);
});
