import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { LogLevel } from '@slack/bolt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BaseAgent, Bot, type ColloquyError } from 'colloquy';
import { SlackChannel } from 'colloquy/slack';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeSlack } from 'colloquy/testing';
import { FakeOpenAIServer } from 'colloquy/testing';

// A channel mention is answered in a thread of it; the person follows up in that thread.

const GENERAL = 'C0GENERAL';

let server: FakeOpenAIServer;
let slack: FakeSlack;
let bot: Bot;
let dir: string;
let errors: ColloquyError[];

class SupportAgent extends BaseAgent {
  name = 'support-agent';
  description = 'Answers questions in Slack';
  instructions = 'Be brief.';
  override model = createOpenAICompatible({ name: 'fake', baseURL: server.baseURL })('m');
}

beforeEach(async () => {
  server = await new FakeOpenAIServer({ replies: ['Order 42 ships Monday.', 'By DHL.'] }).start();
  slack = await FakeSlack.start();
  dir = mkdtempSync(join(tmpdir(), 'colloquy-slack-threads-'));
  const channel = new SlackChannel({
    token: slack.token,
    signingSecret: slack.signingSecret,
    port: 0,
    host: '127.0.0.1',
    logLevel: LogLevel.ERROR,
    clientOptions: { slackApiUrl: slack.slackApiUrl, retryConfig: { retries: 0 } },
  });
  const store = SqliteConversationStore.open(join(dir, 'bot.db'));
  bot = new Bot({ channels: [channel], agents: [new SupportAgent()], store, recordPrompts: true });
  errors = [];
  bot.catch((error) => void errors.push(error));
  await bot.start();
  slack.eventsUrl = channel.eventsUrl;
});

afterEach(async () => {
  await bot.stop();
  await slack.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const promptText = (i: number) => JSON.stringify(server.requests[i]?.messages ?? []);

describe('a Slack thread the bot opened by answering a mention', () => {
  it('answers a follow-up without a mention, with the original question in the prompt', async () => {
    // given a mention in the channel, answered in a thread of it
    const { event } = await slack.mention({
      channel: GENERAL,
      user: 'U0ALICE',
      text: 'when does order 42 ship?',
    });
    const ts = event.ts as string;
    await slack.waitForPosted(1);
    expect(slack.posted).toMatchObject([{ text: 'Order 42 ships Monday.', thread_ts: ts }]);

    // when Alice follows up in that thread without mentioning the bot
    await slack.message({
      channel: GENERAL,
      user: 'U0ALICE',
      text: 'which carrier?',
      thread_ts: ts,
      parent_user_id: 'U0ALICE',
    });

    await slack.waitForPosted(2);
    // then the bot answers in the thread, and its prompt holds the question and its answer
    expect(slack.posted).toMatchObject([
      { thread_ts: ts },
      { channel: GENERAL, text: 'By DHL.', thread_ts: ts },
    ]);
    expect(server.requests).toHaveLength(2);
    expect(promptText(1)).toContain('when does order 42 ship?');
    expect(promptText(1)).toContain('Order 42 ships Monday.');
    expect(promptText(1)).toContain('which carrier?');
    expect(errors).toEqual([]);
  });

  it('leaves a thread it did not open alone unless addressed', async () => {
    // given Bob's thread, in which Alice asked the bot once
    const parent = slack.nextTs();
    await slack.mention({
      channel: GENERAL,
      user: 'U0ALICE',
      text: 'what is this about?',
      thread_ts: parent,
      parent_user_id: 'U0BOB',
    });
    await slack.waitForPosted(1);

    // when Bob goes on talking in his thread
    await slack.message({
      channel: GENERAL,
      user: 'U0BOB',
      text: 'thanks, all clear',
      thread_ts: parent,
      parent_user_id: 'U0BOB',
    });

    // then the bot stays quiet (a model call would have been made by now)
    await bot.settled();
    await slack.idle();
    expect(server.requests).toHaveLength(1);
    expect(slack.posted).toHaveLength(1);
    expect(errors).toEqual([]);
  });
});

describe('forgetting the person who opened a thread', () => {
  it('leaves none of her words in the recorded prompt of a run in the thread', async () => {
    // given Alice's mention, answered in a thread of it, and Bob's question in that thread
    const { event } = await slack.mention({
      channel: GENERAL,
      user: 'U0ALICE',
      text: 'my card is quokka7731',
    });
    await slack.waitForPosted(1);
    await slack.mention({
      channel: GENERAL,
      user: 'U0BOB',
      text: 'which carrier?',
      thread_ts: event.ts as string,
      parent_user_id: 'U0ALICE',
    });
    await slack.waitForPosted(2);
    await bot.settled();
    expect(promptText(1)).toContain('quokka7731');
    const [hers] = await bot.store.get(`slack:${slack.teamId}:${GENERAL}`);

    // when she is forgotten
    await bot.store.forgetParticipant(hers!.participant.id);

    // then no recorded prompt holds her words, the thread's included
    const runs = await bot.store.getRuns!({});
    expect(runs).toHaveLength(2);
    expect(JSON.stringify(runs)).not.toContain('quokka7731');
    expect(errors).toEqual([]);
  });
});
