import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LogLevel } from '@slack/bolt';
import { MockLanguageModelV3 } from 'ai/test';
import type { Chat, User } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BaseAgent, Bot } from 'colloquy';
import { offlineReply } from '../../../agents/offline-model.js';
import type { ColloquyError, Logger, NewMessage, StoredMessage } from 'colloquy';
import { SlackChannel } from 'colloquy/slack';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeSlack, FakeTelegram } from 'colloquy/testing';
import { answer, readable } from '../../fixtures/model-answer.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const GENERAL = 'slack:T0FAKE:C0GENERAL';
const ada: User = { id: 1001, is_bot: false, first_name: 'Ada', last_name: 'Lovelace' };
const adaDm: Chat = { id: 1001, type: 'private', first_name: 'Ada', last_name: 'Lovelace' };

/** A model that answers its n-th call (from 0) with `script(n)`, and keeps every prompt. */
function scripted(script: (call: number) => string) {
  let calls = 0;
  return new MockLanguageModelV3({ doGenerate: async () => answer(script(calls++)) });
}

// The agents of examples/multi-agent.ts, on scripted models.
class TriageAgent extends BaseAgent {
  name = 'triage-agent';
  description = 'First contact for customers';
  instructions = 'Answer people; hand billing questions to @billing-agent.';
  override model: MockLanguageModelV3;
  constructor(script: (call: number) => string) {
    super();
    this.model = scripted(script);
  }
}

class BillingAgent extends BaseAgent {
  name = 'billing-agent';
  description = 'Answers billing questions handed to it';
  instructions = 'Answer billing questions.';
  override model: MockLanguageModelV3;
  constructor(script: (call: number) => string) {
    super();
    this.model = scripted(script);
  }
  shouldRespond(message: NewMessage): boolean {
    return (message.metadata.mentions ?? []).includes(this.id);
  }
}

/** A logger that keeps its warnings (the loop guard warns when it stops the agents). */
function warningLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, info() {}, warn: (msg) => void warnings.push(msg), error() {} };
}

const loopGuardWarnings = (logger: { warnings: string[] }) =>
  logger.warnings.filter((msg) => msg.startsWith('loop guard'));
const agentTurns = (turns: StoredMessage[]) => turns.filter((t) => t.participant.kind === 'agent');

describe('two agents on Telegram and Slack, one SQLite store', () => {
  let telegram: FakeTelegram;
  let slack: FakeSlack;
  let dir: string;
  let store: SqliteConversationStore;
  let bot: Bot | undefined;
  let errors: ColloquyError[];

  async function startBot(options: {
    agents: BaseAgent[];
    maxAgentDepth?: number;
    logger?: Logger;
  }): Promise<void> {
    const telegramChannel = new TelegramChannel({
      token: telegram.token,
      client: { apiRoot: telegram.apiRoot },
      pollingTimeoutSeconds: 5,
    });
    const slackChannel = new SlackChannel({
      token: slack.token,
      signingSecret: slack.signingSecret,
      port: 0,
      host: '127.0.0.1',
      // Each HTTP delivery resolves once its turn, and every hand-off after it, is handled.
      logLevel: LogLevel.ERROR,
      clientOptions: { slackApiUrl: slack.slackApiUrl },
      replyInThread: false, // the agents' exchange stays in the channel's one conversation
    });
    bot = new Bot({
      channels: [telegramChannel, slackChannel],
      agents: options.agents,
      store,
      logger: options.logger ?? warningLogger(),
      ...(options.maxAgentDepth !== undefined && { maxAgentDepth: options.maxAgentDepth }),
    });
    bot.catch((error) => void errors.push(error));
    await bot.start();
    slack.eventsUrl = slackChannel.eventsUrl;
  }

  beforeEach(async () => {
    [telegram, slack] = await Promise.all([FakeTelegram.start(), FakeSlack.start()]);
    dir = mkdtempSync(join(tmpdir(), 'colloquy-multi-agent-'));
    store = new SqliteConversationStore({ path: join(dir, 'colloquy.db') });
    bot = undefined;
    errors = [];
  });

  afterEach(async () => {
    await bot?.stop();
    await Promise.all([telegram.close(), slack.close()]);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("shows each agent the other's turns as a peer's, and its own as the assistant's", async () => {
    // given a triage agent that hands a billing question on, and a billing agent that hands back
    const triage = new TriageAgent(
      (call) =>
        [
          '@billing-agent Alice was charged twice for order 4711.',
          'Alice, billing refunded the second charge.',
        ][call] ?? 'done',
    );
    const billing = new BillingAgent(() => '@triage-agent I refunded the second charge.');
    await startBot({ agents: [triage, billing] });

    // when Alice asks in a Slack channel
    await slack.mention({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'I was charged twice' });
    await bot!.idle();

    // then the three agent turns are posted in order
    expect(slack.posted.map((post) => post.text)).toEqual([
      '@billing-agent Alice was charged twice for order 4711.',
      '@triage-agent I refunded the second charge.',
      'Alice, billing refunded the second charge.',
    ]);
    // and billing-agent saw Alice, and triage-agent as a peer
    expect(readable(billing.model.doGenerateCalls[0]!.prompt)).toEqual([
      ['system', 'Answer billing questions.'],
      ['user', 'Alice: @colloquy I was charged twice'],
      ['user', 'triage-agent (agent): @billing-agent Alice was charged twice for order 4711.'],
    ]);
    // and triage-agent saw its own turn as the assistant's, billing-agent's as a peer's
    expect(readable(triage.model.doGenerateCalls[1]!.prompt)).toEqual([
      ['system', 'Answer people; hand billing questions to @billing-agent.'],
      ['user', 'Alice: @colloquy I was charged twice'],
      ['assistant', '@billing-agent Alice was charged twice for order 4711.'],
      ['user', 'billing-agent (agent): @triage-agent I refunded the second charge.'],
    ]);
    expect(errors).toEqual([]);
  });

  it.each([
    { maxAgentDepth: undefined, expected: 5 },
    { maxAgentDepth: 2, expected: 2 },
  ])(
    'stops two agents that keep mentioning each other after $expected agent turns (maxAgentDepth $maxAgentDepth)',
    async ({ maxAgentDepth, expected }) => {
      // given two agents whose every reply mentions the other
      const triage = new TriageAgent((call) => `@billing-agent over to you (${call})`);
      const billing = new BillingAgent((call) => `@triage-agent back to you (${call})`);
      const logger = warningLogger();
      await startBot({ agents: [triage, billing], maxAgentDepth, logger });

      // when Alice starts them off
      await slack.mention({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'billing question' });
      await bot!.idle();

      // then the guard stops them after exactly that many agent turns, and says so
      expect(loopGuardWarnings(logger)).toHaveLength(1);
      const first = await bot!.store.get(GENERAL);
      expect(agentTurns(first)).toHaveLength(expected);
      expect(first).toHaveLength(expected + 1);
      expect(slack.posted).toHaveLength(expected);

      // and the bot still answers the next person
      await slack.mention({ channel: 'C0GENERAL', user: 'U0BOB', text: 'me too' });
      await bot!.idle();
      const second = (await bot!.store.get(GENERAL)).slice(first.length);
      expect(second[0]).toMatchObject({ participant: { id: 'slack:U0BOB' } });
      expect(second[1]).toMatchObject({
        participant: { id: 'triage-agent' },
        metadata: { replyToParticipantId: 'slack:U0BOB' },
      });
      expect(agentTurns(second)).toHaveLength(expected);
      expect(loopGuardWarnings(logger)).toHaveLength(2);
      expect(errors).toEqual([]);
    },
  );

  it('keeps the conversations of both platforms in the one store', async () => {
    // given one bot on Telegram and Slack with one store
    const triage = new TriageAgent(() => 'Happy to help.');
    const billing = new BillingAgent(() => 'unused');
    await startBot({ agents: [triage, billing] });

    // when Ada writes to the bot on Telegram and Alice mentions it on Slack
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'hello' });
    await slack.mention({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'hi there' });
    await telegram.waitForSent(1);
    await bot!.stop(); // waits for the turns in flight and flushes capture

    // then both conversations are listed
    const { items } = await store.listConversations();
    expect(items.map((c) => [c.id, c.messageCount]).sort()).toEqual([
      [GENERAL, 2],
      ['telegram:1001', 2],
    ]);
    // and read as one transcript, with speaker names
    const rows = store.db
      .prepare('SELECT conversation_id, speaker, text FROM transcript')
      .all() as { conversation_id: string; speaker: string; text: string }[];
    expect(rows.map((r) => [r.conversation_id, r.speaker, r.text])).toEqual([
      [GENERAL, 'Alice', '@colloquy hi there'],
      [GENERAL, 'triage-agent', 'Happy to help.'],
      ['telegram:1001', 'Ada Lovelace', 'hello'],
      ['telegram:1001', 'triage-agent', 'Happy to help.'],
    ]);
    // and billing-agent, not named, answered nobody
    expect(billing.model.doGenerateCalls).toEqual([]);
    expect(errors).toEqual([]);
  });
});

/** examples/multi-agent.ts as a child process; resolves its exit code and output. */
function runExample(env: Record<string, string | undefined>) {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, COLLOQUY_MODEL: '' };
  for (const name of [
    'TELEGRAM_BOT_TOKEN',
    'TELEGRAM_API_ROOT',
    'SLACK_BOT_TOKEN',
    'SLACK_SIGNING_SECRET',
    'SLACK_APP_TOKEN',
    'SLACK_API_URL',
    'PORT',
    'COLLOQUY_DB',
  ]) {
    delete childEnv[name];
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/multi-agent.ts'], {
    cwd: ROOT,
    env: { ...childEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (stdout.includes('Press Ctrl+C to stop.')) resolve(stdout);
    });
    child.once('exit', () => reject(new Error(`the example exited early: ${stderr}`)));
  });
  ready.catch(() => undefined); // a test that expects an early exit does not await it
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { child, ready, exited, stdout: () => stdout, stderr: () => stderr };
}

describe('examples/multi-agent.ts', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'colloquy-multi-agent-example-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers Telegram DMs with the offline model, each agent once, and stops cleanly on SIGTERM', async () => {
    // given the example pointed at FakeTelegram and FakeSlack
    const [telegram, slack] = await Promise.all([FakeTelegram.start(), FakeSlack.start()]);
    const db = join(dir, 'colloquy.db');
    try {
      const example = runExample({
        TELEGRAM_BOT_TOKEN: telegram.token,
        TELEGRAM_API_ROOT: telegram.apiRoot,
        SLACK_BOT_TOKEN: slack.token,
        SLACK_SIGNING_SECRET: slack.signingSecret,
        SLACK_API_URL: slack.slackApiUrl,
        PORT: '0',
        COLLOQUY_DB: db,
      });
      const banner = await example.ready;
      expect(banner).toMatch(/Telegram: @colloquy_test_bot is polling/);
      expect(banner).toMatch(
        /Slack: @colloquy receives events at http:\/\/localhost:\d+\/slack\/events/,
      );
      expect(banner).toContain('Model: offline');
      expect(banner).toContain(`Conversations: ${db}.`);

      // when Ada writes to the bot
      telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'hello' });
      const [reply] = await telegram.waitForSent(1, 15_000);

      // then triage-agent answers with the offline model's labelled reply
      expect(reply?.text).toBe(offlineReply('Ada Lovelace: hello'));

      // when Ada names billing-agent, so that triage's echo names it too
      telegram.sendUserMessage({ chat: adaDm, from: ada, text: '@billing-agent charged twice' });
      await telegram.waitForSent(3, 15_000);

      // then SIGTERM, which finishes the turns in flight, stops it with exit code 0
      example.child.kill('SIGTERM');
      expect(await example.exited).toBe(0);
      // and each agent answered Ada once: billing-agent did not answer triage's echo as well
      expect(telegram.sent).toHaveLength(3);

      // and the database holds every turn, in order
      const store = new SqliteConversationStore({ path: db, readonly: true });
      const turns = await store.get('telegram:1001');
      await store.close();
      expect(turns.slice(0, 2).map((t) => [t.participant.id, t.content])).toEqual([
        ['telegram:1001', 'hello'],
        ['triage-agent', offlineReply('Ada Lovelace: hello')],
      ]);
      expect(
        turns.slice(2).map((t) => [t.participant.id, t.metadata.replyToParticipantId]),
      ).toEqual([
        ['telegram:1001', undefined],
        ['triage-agent', 'telegram:1001'],
        ['billing-agent', 'telegram:1001'],
      ]);
      expect(turns[1]?.metadata).toMatchObject({ model: 'offline', offline: true });
    } finally {
      await Promise.all([telegram.close(), slack.close()]);
    }
  });

  it('names every missing variable in one message', async () => {
    const example = runExample({});
    expect(await example.exited).toBe(1);
    expect(example.stderr()).toContain(
      'Missing TELEGRAM_BOT_TOKEN, SLACK_BOT_TOKEN, and SLACK_SIGNING_SECRET (or SLACK_APP_TOKEN for Socket Mode).',
    );
    expect(example.stdout()).toBe('');
  });
});
