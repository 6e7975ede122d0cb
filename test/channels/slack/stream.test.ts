import { join } from 'node:path';
import { LogLevel, type App } from '@slack/bolt';
import { WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { BaseAgent, type Bot } from 'colloquy';
import { FakeSlack, type FakeSlackOptions } from 'colloquy/testing';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { slackBotOn, startSlackBot } from './slack.fixtures.js';
import { PacedAgent } from '../../fixtures/paced-model.js';
import { revisionsOf } from '../../fixtures/revisions.js';
import { tempDirs } from '../../fixtures/temp-dirs.js';

const temp = tempDirs();

const GENERAL = 'C0GENERAL';
const DM = 'D0ALICE';

describe('a reply streamed on Slack (Bolt against FakeSlack)', () => {
  let slack: FakeSlack;
  let agent: PacedAgent;
  let bot: Bot;

  beforeEach(() => {
    agent = new PacedAgent();
  });

  afterEach(async () => {
    await bot.stop();
    await slack.close();
  });

  async function startBot(fake: FakeSlackOptions = {}) {
    slack = await FakeSlack.start(fake);
    bot = await slackBotOn(slack, agent);
  }

  const methods = () =>
    slack.calls
      .map((call) => call.method)
      .filter((method) => method.startsWith('chat.') && method !== 'chat.postMessage');

  const replies = async (conversationId: string) =>
    (await bot.store.get(conversationId)).filter((turn) => turn.participant.kind === 'agent');

  it('streams the answer to a mention in its thread with Slack’s streaming methods, to the person', async () => {
    await startBot();
    const { event } = await slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'deploy?' });
    await agent.paced.started;
    agent.paced.say('Deploy 812');
    const [streaming] = await slack.waitForPosted(1);
    expect(streaming).toMatchObject({ text: 'Deploy 812', thread_ts: event.ts, streaming: true });
    const start = slack.calls.find((call) => call.method === 'chat.startStream');
    expect(start?.params).toMatchObject({
      channel: GENERAL,
      thread_ts: event.ts,
      recipient_user_id: 'U0ALICE',
      recipient_team_id: 'T0FAKE',
    });

    agent.paced.finish(' is **live**.');
    await slack.waitFor(() => slack.posted[0]?.streaming === false);
    await bot.idle();

    expect(slack.posted).toHaveLength(1);
    expect(slack.posted[0]).toMatchObject({
      text: 'Deploy 812 is **live**.',
      metadata: { event_type: 'colloquy_reply', event_payload: { part: 0 } },
    });
    expect(methods().at(-1)).toBe('chat.stopStream');
    expect(methods()).not.toContain('chat.update');
    const stored = await replies(`slack:T0FAKE:${GENERAL}:${String(event.ts)}`);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      content: 'Deploy 812 is **live**.',
      delivery: 'sent',
      metadata: { messageId: streaming?.ts },
    });
  });

  it('streams in a DM thread (an assistant thread) without naming a recipient', async () => {
    await startBot();
    const thread = '1700000000.000100';
    await slack.message({ channel: DM, user: 'U0ALICE', text: 'deploy?', thread_ts: thread });
    await agent.paced.started;
    agent.paced.say('Deploy 812');
    await slack.waitForPosted(1);
    agent.paced.finish(' is live.');
    await slack.waitFor(() => slack.posted[0]?.streaming === false);
    await bot.idle();
    const start = slack.calls.find((call) => call.method === 'chat.startStream');
    expect(start?.params).toMatchObject({ channel: DM, thread_ts: thread });
    expect(start?.params.recipient_user_id).toBeUndefined();
    expect(slack.posted[0]).toMatchObject({ text: 'Deploy 812 is live.', thread_ts: thread });
  });

  it('posts a reply at the top level of a DM, then updates it as the answer grows', async () => {
    await startBot();
    await slack.message({ channel: DM, user: 'U0ALICE', text: 'deploy?' });
    await agent.paced.started;
    agent.paced.say('Deploy 812');
    const [posted] = await slack.waitForPosted(1);
    expect(posted).toMatchObject({ channel: DM, text: 'Deploy 812' });
    agent.paced.finish(' is live.');
    await slack.waitFor(() => slack.posted[0]?.text === 'Deploy 812 is live.');
    await bot.idle();
    expect(methods()).toEqual(['chat.update']);
    const [stored] = await replies(`slack:T0FAKE:${DM}`);
    expect(stored).toMatchObject({ content: 'Deploy 812 is live.', delivery: 'sent' });
  });

  it('records the reply as the agent wrote it when Slack sends back its updates as message_changed', async () => {
    // given a bot capturing into SQLite, and a Slack that tells the app of its own updates
    slack = await FakeSlack.start({ echoBotMessages: true });
    const store = new SqliteConversationStore({ path: join(temp.make('slack-echo'), 'c.db') });
    ({ bot } = await startSlackBot(slack, { agents: [agent], store }));

    // when a reply at the top level of a DM is posted, then updated as the answer grows
    await slack.message({ channel: DM, user: 'U0ALICE', text: 'deploy?' });
    await agent.paced.started;
    agent.paced.say('Deploy 812');
    await slack.waitForPosted(1);
    agent.paced.finish(' is **live**.');
    await slack.waitFor(() => slack.posted[0]?.text !== 'Deploy 812');
    await slack.idle();
    await bot.idle();

    // then the bot took Slack's message_changed, and stored the reply as written, never edited
    const changed = slack.acknowledged.filter((ack) => ack.event.subtype === 'message_changed');
    expect(changed).toHaveLength(1);
    const [reply] = await replies(`slack:T0FAKE:${DM}`);
    const revisions = revisionsOf(store, reply!.id);
    expect(reply?.content).toBe('Deploy 812 is **live**.');
    expect({ editedAt: reply?.editedAt, revisions }).toEqual({
      editedAt: undefined,
      revisions: [],
    });
  });

  it('posts and updates where the workspace cannot stream, and stops asking', async () => {
    await startBot({ streaming: false });
    await slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'deploy?' });
    await agent.paced.started;
    agent.paced.say('Deploy 812');
    await slack.waitForPosted(1);
    agent.paced.finish(' is live.');
    await slack.waitFor(() => slack.posted[0]?.text === 'Deploy 812 is live.');
    await bot.idle();
    expect(methods()).toEqual(['chat.startStream', 'chat.update']);
    expect(slack.posted[0]?.metadata?.event_type).toBe('colloquy_reply');
  });

  it('streams broadcast mentions as text that notifies no one', async () => {
    await startBot();
    await slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'deploy?' });
    await agent.paced.started;
    agent.paced.say('Tell <!here');
    await slack.waitForPosted(1);
    agent.paced.say('> and @channel');
    await slack.waitFor(() => slack.posted[0]?.text.includes('channel') === true);
    agent.paced.finish(', then @everyone and <!channel>.');
    await slack.waitFor(() => slack.posted[0]?.streaming === false);
    await bot.idle();

    const sent = slack.calls
      .filter((call) => call.method.endsWith('Stream'))
      .map((call) => String(call.params.markdown_text ?? ''))
      .join('');
    expect(sent).not.toMatch(/<!(here|channel)|@(channel|everyone)/);
    expect(slack.posted[0]?.text.replace(/\u2060/g, '')).toBe(
      'Tell <!here> and @channel, then @everyone and <!channel>.',
    );
  });

  it('posts and updates in a channel that refused to stream, and streams in the others', async () => {
    slack = await FakeSlack.start({ channels: { C0GENERAL: 'general', C0ORDERS: 'orders' } });
    bot = await slackBotOn(slack, new WholeAnswerAgent('Deploy 812 is live.'));
    slack.failNext('chat.startStream', { error: 'not_allowed' });
    const answered = async (channel: string, n: number) => {
      await slack.mention({ channel, user: 'U0ALICE', text: 'deploy?' });
      await slack.waitFor(
        () => slack.posted.length === n && slack.posted[n - 1]?.streaming !== true,
      );
      await bot.idle();
    };
    await answered(GENERAL, 1);
    await answered('C0ORDERS', 2);
    await answered(GENERAL, 3);

    const starts = slack.calls.filter((call) => call.method === 'chat.startStream');
    expect(starts.map((call) => call.params.channel)).toEqual([GENERAL, 'C0ORDERS']);
    expect(slack.posted.map((post) => [post.channel, post.streaming ?? 'posted'])).toEqual([
      [GENERAL, 'posted'],
      ['C0ORDERS', false],
      [GENERAL, 'posted'],
    ]);
  });

  it('waits out a 429 on an append and shows the whole answer', async () => {
    await startBot({ editLimit: { calls: 1, perMs: 1000 } });
    await slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'deploy?' });
    await agent.paced.started;
    agent.paced.say('Deploy');
    await slack.waitForPosted(1);
    agent.paced.say(' 812');
    await slack.waitFor(() => slack.posted[0]?.text === 'Deploy 812');
    agent.paced.say(' is');
    await slack.waitFor(() => slack.posted[0]?.text === 'Deploy 812 is');
    agent.paced.finish(' live.');
    await slack.waitFor(() => slack.posted[0]?.streaming === false);
    await bot.idle();
    const appends = slack.calls.filter((call) => call.method === 'chat.appendStream');
    expect(appends.length).toBe(3); // two appends, one of them refused once with 429
    expect(slack.posted[0]?.text).toBe('Deploy 812 is live.');
  });
});

/** An agent whose model streams `text` at once, for every turn it answers. */
class WholeAnswerAgent extends BaseAgent {
  name = 'support-agent';
  description = 'Answers questions';
  instructions = 'Be brief.';
  constructor(text: string) {
    super();
    this.model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: simulateReadableStream<LanguageModelV3StreamPart>({
          chunks: [
            { type: 'stream-start', warnings: [] },
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: text },
            { type: 'text-end', id: 't' },
            {
              type: 'finish',
              finishReason: { unified: 'stop', raw: 'stop' },
              usage: {
                inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
                outputTokens: { total: 5, text: 5, reasoning: 0 },
              },
            },
          ],
        }),
      }),
    });
  }
  override model: MockLanguageModelV3;
}

describe('FakeSlack speaks the streaming methods as Slack does', () => {
  let slack: FakeSlack;
  let client: App['client'];

  beforeEach(async () => {
    slack = await FakeSlack.start();
    client = new WebClient(slack.token, {
      slackApiUrl: slack.slackApiUrl,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      logLevel: LogLevel.ERROR,
    });
  });

  afterEach(async () => {
    await slack.close();
  });

  it('refuses a channel stream without its recipient, and a stream without a thread', async () => {
    await expect(
      client.chat.startStream({ channel: GENERAL, thread_ts: '1.000001', markdown_text: 'x' }),
    ).rejects.toMatchObject({ data: { error: 'missing_recipient_user_id' } });
    await expect(
      client.chat.startStream({
        channel: GENERAL,
        thread_ts: '1.000001',
        markdown_text: 'x',
        recipient_user_id: 'U0ALICE',
      }),
    ).rejects.toMatchObject({ data: { error: 'missing_recipient_team_id' } });
    await expect(
      client.chat.startStream({ channel: DM, thread_ts: '', markdown_text: 'x' }),
    ).rejects.toMatchObject({ data: { error: 'invalid_arguments' } });
  });

  it('refuses chat.update while a message streams, and an append once it stopped', async () => {
    const { ts } = await client.chat.startStream({
      channel: DM,
      thread_ts: '1.000001',
      markdown_text: 'Deploy',
    });
    await expect(client.chat.update({ channel: DM, ts: ts!, text: 'x' })).rejects.toMatchObject({
      data: { error: 'cant_update_message' },
    });
    await client.chat.appendStream({ channel: DM, ts: ts!, markdown_text: ' 812' });
    await client.chat.stopStream({ channel: DM, ts: ts!, markdown_text: '.' });
    expect(slack.posted[0]).toMatchObject({ text: 'Deploy 812.', streaming: false });
    await expect(
      client.chat.appendStream({ channel: DM, ts: ts!, markdown_text: '!' }),
    ).rejects.toMatchObject({ data: { error: 'message_not_in_streaming_state' } });
    await client.chat.update({ channel: DM, ts: ts!, text: 'Deploy 812!' });
  });

  it('answers 429 ratelimited with Retry-After past the edit limit', async () => {
    await slack.close();
    slack = await FakeSlack.start({ editLimit: { calls: 1, perMs: 60_000 } });
    client = new WebClient(slack.token, {
      slackApiUrl: slack.slackApiUrl,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      logLevel: LogLevel.ERROR,
    });
    const { ts } = await client.chat.postMessage({ channel: GENERAL, text: 'a' });
    await client.chat.update({ channel: GENERAL, ts: ts!, text: 'b' });
    await expect(
      client.chat.update({ channel: GENERAL, ts: ts!, text: 'c' }),
    ).rejects.toMatchObject({ code: 'slack_webapi_rate_limited_error', retryAfter: 60 });
  });
});
