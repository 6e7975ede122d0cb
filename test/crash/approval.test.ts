import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { Chat, User } from 'grammy/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FakeDiscord,
  FakeOpenAIServer,
  FakeSlack,
  FakeTelegram,
  type FakeDiscordUser,
} from 'colloquy/testing';
import { freePort, scratch, startBot, stopBot, type CrashSetup } from './harness.js';

// A tool approval survives a SIGKILL on each platform: the built approval example
// (dist/examples/approval-bot.js) asks a person to approve a refund with Approve / Deny
// buttons, is SIGKILLed once its question is recorded, and a new process answers the press of
// Approve: the refund runs once, and its answer is recorded once and shown once.
//
// The fakes give the bot a minute to acknowledge a press: their platforms' 3 seconds are tested
// where a late acknowledgement is (test/channels/*/interactions), and a loaded machine must not
// fail a scenario about restarts.
//
// Runs the built examples: `npm run build` (or `npx tsc -b tsconfig.json`) first.

const QUESTION = 'May I run refund_order {"orderId":"4242"}?';
const ANSWER = 'Refunded order 4242.';
const ACK_DEADLINE_MS = 60_000;
/** Each test's time, and what a wait for the bot may take of it: a loaded machine only slows it. */
const WAIT_MS = 120_000;

let model: FakeOpenAIServer;
beforeAll(async () => {
  // Asks to refund until the tool has answered, then says so.
  model = await new FakeOpenAIServer({
    fallback: (request) =>
      request.messages.at(-1)?.role === 'tool'
        ? ANSWER
        : { toolCalls: [{ name: 'refund_order', arguments: { orderId: '4242' } }] },
  }).start();
});
afterAll(async () => {
  await model?.close();
});

/** One platform's side of the scene: how the person asks, what the bot shows, how they press. */
interface Platform {
  env: Record<string, string>;
  readyLine: RegExp;
  /** The person asks for the refund. */
  ask(): void;
  /** The texts the platform shows from the bot, once there are `count`. */
  shown(count: number): Promise<string[]>;
  /** The labels of the buttons under the question, as the platform renders them. */
  buttons(): string[];
  /** The person presses Approve; resolves once the platform has the press acknowledged. */
  approve(): Promise<void>;
}

/** A column of the SQLite file (nothing while the bot has not created it). */
function column(file: string, sql: string): unknown[] {
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).pluck().all();
    } finally {
      db.close();
    }
  } catch {
    return [];
  }
}

const answeredRuns = (db: string) =>
  column(db, "SELECT status FROM agent_runs WHERE status = 'answered'").length;

/** Asks, SIGKILLs the bot once the question is recorded, and approves on a new process. */
async function approveAcrossKill(name: string, platform: Platform): Promise<void> {
  const dir = scratch(`approval-${name}`);
  const db = join(dir, 'colloquy.db');
  const setup: CrashSetup = {
    example: 'approval-bot',
    env: {
      ...platform.env,
      COLLOQUY_DB: db,
      COLLOQUY_MODEL: 'openai-compatible:fake-model',
      COLLOQUY_MODEL_BASE_URL: model.baseURL,
    },
    readyLine: platform.readyLine,
    logFile: join(dir, 'bot.log'),
  };
  const first = startBot(setup);
  expect(await first.ready).toBe(true);
  platform.ask();
  expect(await platform.shown(1)).toEqual([QUESTION]);
  expect(platform.buttons()).toEqual(['Approve', 'Deny']);
  while (answeredRuns(db) < 1) await sleep(20);
  first.child.kill('SIGKILL');
  expect((await first.exited).signal).toBe('SIGKILL');

  const second = startBot(setup);
  expect(await second.ready).toBe(true);
  await platform.approve();
  expect(await platform.shown(2)).toEqual([QUESTION, ANSWER]);
  while (answeredRuns(db) < 2) await sleep(20);
  expect(await stopBot(second)).toBe('exit 0');

  expect(await platform.shown(2)).toEqual([QUESTION, ANSWER]);
  expect(column(db, `SELECT content FROM messages WHERE content = '${ANSWER}'`)).toHaveLength(1);
  const log = readFileSync(setup.logFile, 'utf8');
  expect(log.match(/refunded order 4242/g)).toHaveLength(1);
  const toolResult = model.requests.at(-1)!.messages.find((m) => m.role === 'tool');
  expect(toolResult?.content).toBe('{"refunded":"4242"}');
}

describe('tool approval across a SIGKILL', () => {
  it(
    'refunds once on a Telegram Approve pressed after the bot that asked was killed',
    async () => {
      const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
      const adaDm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };
      const telegram = await FakeTelegram.start();
      const question = () => telegram.sent.find((s) => s.method === 'sendMessage')!.message;
      const keyboard = () =>
        telegram.messageNow(adaDm.id, question().message_id)?.reply_markup?.inline_keyboard[0] as
          { text: string; callback_data: string }[] | undefined;
      try {
        await approveAcrossKill('telegram', {
          env: { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot },
          readyLine: /is polling for updates/,
          ask: () =>
            telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'Refund order 4242' }),
          shown: async (count) => (await telegram.waitForSent(count, WAIT_MS)).map((s) => s.text),
          buttons: () => keyboard()?.map((b) => b.text) ?? [],
          approve: async () => {
            telegram.pressButton(question(), ada, keyboard()![0]!.callback_data);
            await telegram.waitForCall('answerCallbackQuery', 1, WAIT_MS);
          },
        });
      } finally {
        await telegram.close();
      }
    },
    WAIT_MS,
  );

  it(
    'refunds once on a Slack Approve pressed after the bot that asked was killed',
    async () => {
      const slack = await FakeSlack.start({ ackDeadlineMs: ACK_DEADLINE_MS });
      const port = await freePort();
      slack.eventsUrl = `http://127.0.0.1:${port}/slack/events`;
      const dm = 'D0ALICE';
      const elements = () => {
        const blocks = JSON.parse(slack.posted[0]!.params.blocks as string) as {
          elements?: { action_id: string; text: { text: string } }[];
        }[];
        return blocks.flatMap((block) => block.elements ?? []);
      };
      try {
        await approveAcrossKill('slack', {
          env: {
            SLACK_BOT_TOKEN: slack.token,
            SLACK_SIGNING_SECRET: slack.signingSecret,
            SLACK_API_URL: slack.slackApiUrl,
            PORT: String(port),
          },
          readyLine: /receives events at/,
          ask: () =>
            void slack.message({ channel: dm, user: 'U0ALICE', text: 'Refund order 4242' }),
          shown: async (count) =>
            (await slack.waitForPosted(count, WAIT_MS)).map((post) => post.text),
          buttons: () => elements().map((element) => element.text.text),
          approve: async () => {
            const actionId = elements()[0]!.action_id;
            const ack = await slack.interactions.press({
              ts: slack.posted[0]!.ts,
              user: 'U0ALICE',
              actionId,
            });
            expect(ack.inTime).toBe(true);
          },
        });
      } finally {
        await slack.close();
      }
    },
    WAIT_MS,
  );

  it(
    'refunds once on a Discord Approve pressed after the bot that asked was killed',
    async () => {
      const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice' };
      const dm = '1202570000000000001';
      const discord = await FakeDiscord.start({ ackDeadlineMs: ACK_DEADLINE_MS });
      discord.addDmChannel({ id: dm, recipient: alice });
      const buttons = () =>
        (discord.posted[0]!.components as { components: { label: string; custom_id: string }[] }[])
          .flatMap((row) => row.components)
          .map(({ label, custom_id }) => ({ label, custom_id }));
      try {
        await approveAcrossKill('discord', {
          env: { DISCORD_BOT_TOKEN: discord.token, DISCORD_API_URL: discord.restApi },
          readyLine: /is connected to Discord/,
          ask: () =>
            void discord.userMessage({ channelId: dm, author: alice, content: 'Refund 4242' }),
          shown: async (count) =>
            (await discord.waitForPosted(count, WAIT_MS)).map((post) => post.content),
          buttons: () => buttons().map((button) => button.label),
          approve: async () => {
            const customId = buttons()[0]!.custom_id;
            const id = discord.interactions.press({
              messageId: discord.posted[0]!.id,
              user: alice,
              customId,
            });
            while (!discord.interactions.acknowledgements.some((a) => a.interactionId === id)) {
              await sleep(20);
            }
            const ack = discord.interactions.acknowledgements.find((a) => a.interactionId === id);
            expect(ack?.accepted).toBe(true);
          },
        });
      } finally {
        await discord.close();
      }
    },
    WAIT_MS,
  );
});
