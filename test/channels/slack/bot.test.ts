import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogLevel } from '@slack/bolt';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BaseAgent,
  Bot,
  MalformedEventError,
  PlatformError,
  type ColloquyError,
  type StoredMessage,
} from 'colloquy';
import { SlackChannel, type SlackChannelOptions } from 'colloquy/slack';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeSlack } from 'colloquy/testing';
import { answer } from '../../fixtures/model-answer.js';

const TEAM = 'T0FAKE';
const GENERAL = 'C0GENERAL';
const DM = 'D0ALICE';
const inGeneral = `slack:${TEAM}:${GENERAL}`;

class SupportAgent extends BaseAgent {
  name = 'support-agent';
  description = 'Answers questions in Slack';
  instructions = 'Be brief.';
  reply = 'On it.';
  override model = new MockLanguageModelV3({ doGenerate: async () => answer(this.reply) });
}

describe('a Bot on Slack (Bolt against FakeSlack, SQLite store)', () => {
  let slack: FakeSlack;
  let bot: Bot;
  let agent: SupportAgent;
  let store: SqliteConversationStore;
  let errors: ColloquyError[];
  let dir: string;

  async function startBot(options: Partial<SlackChannelOptions> = {}) {
    const channel = new SlackChannel({
      token: slack.token,
      signingSecret: slack.signingSecret,
      port: 0,
      host: '127.0.0.1',
      // Answers stay in the conversation asked in (test/slack-payloads covers threaded answers).
      replyInThread: false,
      logLevel: LogLevel.ERROR,
      clientOptions: {
        slackApiUrl: slack.slackApiUrl,
        retryConfig: { retries: 2, minTimeout: 10, maxTimeout: 20 },
      },
      ...options,
    });
    bot = new Bot({ channels: [channel], agents: [agent], store });
    bot.catch((error) => void errors.push(error));
    await bot.start();
    slack.eventsUrl = channel.eventsUrl;
    return channel;
  }

  /** A delivery, then everything the bot does about it (the HTTP answer only waits for the commit). */
  async function handled<T>(delivery: Promise<T>): Promise<T> {
    const result = await delivery;
    await bot.idle();
    return result;
  }

  // The bot's store view waits for the turns captured so far (a turn does not wait for them).
  const turns = (conversationId: string): Promise<StoredMessage[]> =>
    bot.store.get(conversationId, { includeDeleted: true });

  beforeEach(async () => {
    slack = await FakeSlack.start();
    dir = mkdtempSync(join(tmpdir(), 'colloquy-slack-'));
    store = new SqliteConversationStore({ path: join(dir, 'colloquy.db') });
    agent = new SupportAgent();
    errors = [];
  });

  afterEach(async () => {
    await bot?.stop();
    await slack.close();
    await store.close?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a mention in a channel in place (replyInThread: false) and stores both turns', async () => {
    await startBot();
    const { event } = await handled(
      slack.mention({
        channel: GENERAL,
        user: 'U0ALICE',
        text: 'where is my order?',
      }),
    );

    expect(slack.posted).toMatchObject([{ channel: GENERAL, text: 'On it.' }]);
    expect(slack.posted[0]?.thread_ts).toBeUndefined();
    const [asked, answered] = await turns(inGeneral);
    expect(asked).toMatchObject({
      id: `slack:${TEAM}:${GENERAL}:${event.ts as string}`,
      conversationId: inGeneral,
      participant: { kind: 'user', id: 'slack:U0ALICE', displayName: 'Alice' },
      content: '@colloquy where is my order?',
      scope: 'channel',
      metadata: {
        channelId: GENERAL,
        channelName: 'general',
        messageId: event.ts,
        mentions: ['slack:U0BOT'],
      },
    });
    expect(answered).toMatchObject({
      id: `slack:${TEAM}:${GENERAL}:${event.ts as string}:support-agent:reply`,
      conversationId: inGeneral,
      participant: { kind: 'agent', id: 'support-agent' },
      content: 'On it.',
      scope: 'channel',
      metadata: { channelId: GENERAL, messageId: slack.posted[0]?.ts, replyToMessageId: event.ts },
    });
    expect(errors).toEqual([]);
  });

  it('answers a direct message in the DM', async () => {
    await startBot();
    await handled(slack.message({ channel: DM, user: 'U0ALICE', text: 'hello' }));

    expect(slack.posted).toMatchObject([{ channel: DM, text: 'On it.' }]);
    const stored = await turns(`slack:${TEAM}:${DM}`);
    expect(stored.map((t) => [t.scope, t.participant.id])).toEqual([
      ['dm', 'slack:U0ALICE'],
      ['dm', 'support-agent'],
    ]);
  });

  it('answers a mention in a thread in that thread', async () => {
    await startBot();
    const parent = slack.nextTs();
    await handled(
      slack.mention({
        channel: GENERAL,
        user: 'U0ALICE',
        text: 'and this?',
        thread_ts: parent,
        parent_user_id: 'U0BOB',
      }),
    );

    expect(slack.posted).toMatchObject([{ channel: GENERAL, thread_ts: parent }]);
    const stored = await turns(`${inGeneral}:${parent}`);
    expect(stored).toHaveLength(2);
    expect(stored[0]).toMatchObject({
      scope: 'thread',
      metadata: { threadId: parent, replyToMessageId: parent, replyToParticipantId: 'slack:U0BOB' },
    });
    expect(stored[1]).toMatchObject({ scope: 'thread', metadata: { threadId: parent } });
  });

  it('answers a reply in its own thread without a mention', async () => {
    await startBot();
    await handled(slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'status?' }));
    const botTs = slack.posted[0]?.ts as string;

    await handled(
      slack.message({
        channel: GENERAL,
        user: 'U0BOB',
        text: 'and mine?',
        thread_ts: botTs,
        parent_user_id: 'U0BOT',
      }),
    );

    expect(slack.posted).toHaveLength(2);
    expect(slack.posted[1]).toMatchObject({ thread_ts: botTs });
    expect(await turns(`${inGeneral}:${botTs}`)).toHaveLength(2);
  });

  it('does not answer a thread reply that concerns someone else', async () => {
    await startBot();
    const parent = slack.nextTs();
    await handled(
      slack.message({
        channel: GENERAL,
        user: 'U0BOB',
        text: 'agreed',
        thread_ts: parent,
        parent_user_id: 'U0ALICE',
      }),
    );

    expect(slack.posted).toHaveLength(0);
    expect(await turns(`${inGeneral}:${parent}`)).toHaveLength(1);
  });

  it('stores and answers a retried event once, even when the retry overlaps the first delivery', async () => {
    await startBot();
    const event = {
      type: 'app_mention',
      user: 'U0ALICE',
      text: '<@U0BOT> once please',
      channel: GENERAL,
      ts: slack.nextTs(),
    };
    const first = slack.sendEvent(event, { eventId: 'Ev0RETRY' });
    const retry = slack.sendEvent(event, {
      eventId: 'Ev0RETRY',
      retryNum: 1,
      retryReason: 'http_timeout',
    });
    expect((await Promise.all([first, retry])).map((d) => d.status)).toEqual([200, 200]);
    await handled(slack.sendEvent(event, { eventId: 'Ev0RETRY', retryNum: 2 }));

    expect(slack.posted).toHaveLength(1);
    expect(await turns(inGeneral)).toHaveLength(2);
  });

  it('stores and answers message + app_mention for one mention once', async () => {
    await startBot();
    const { deliveries } = await handled(
      slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'hi' }),
    );

    expect(deliveries).toHaveLength(2);
    expect(slack.posted).toHaveLength(1);
    expect(await turns(inGeneral)).toHaveLength(2);
  });

  it('records an edit and a delete without answering again', async () => {
    await startBot();
    const { event } = await handled(
      slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'teh order' }),
    );
    const ts = event.ts as string;
    await handled(
      slack.editMessage({
        channel: GENERAL,
        user: 'U0ALICE',
        ts,
        text: '<@U0BOT> the order',
        previousText: event.text as string,
      }),
    );
    const [edited] = await turns(inGeneral);
    expect(edited).toMatchObject({ content: '@colloquy the order', editedAt: expect.any(String) });

    await handled(slack.deleteMessage({ channel: GENERAL, ts }));
    const [deleted] = await turns(inGeneral);
    expect(deleted?.deletedAt).toEqual(expect.any(String));
    expect(slack.posted).toHaveLength(1);
  });

  it('records a deletion that arrives while the author of its turn is looked up as a tombstone', async () => {
    // given a bot that answers each event at once, and a slow users.info for Alice
    await startBot();
    const lookup = slack.holdNext('users.info');

    // when she asks, and deletes the question before her name is known (neither is
    // acknowledged before the question is committed, which waits for her name)
    const ts = slack.nextTs();
    const asking = slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'oops', ts });
    await lookup.arrived;
    const deleting = slack.deleteMessage({ channel: GENERAL, ts });
    lookup.release();
    await Promise.all([asking, deleting]);
    await slack.waitForPosted(1);
    await bot.stop();

    // then the question is stored, under her name, and marked deleted
    const [asked] = await turns(inGeneral);
    expect(asked).toMatchObject({
      metadata: { messageId: ts },
      participant: { displayName: 'Alice' },
      deletedAt: expect.any(String),
    });
    expect(errors).toEqual([]);
  });

  it('commits the turns of a thread in the order they arrived while the first author is looked up', async () => {
    // given a bot that knows Bob and #general already, and a slow users.info for Alice
    await startBot();
    await handled(slack.message({ channel: GENERAL, user: 'U0BOB', text: 'morning' }));
    const THREAD = '1773226800.000100';
    const inThread = { channel: GENERAL, thread_ts: THREAD, parent_user_id: 'U0BOB' };
    const lookup = slack.holdNext('users.info');

    // when Alice writes in a thread, and Bob answers while her name is still being looked up
    // (given time to overtake her turn, were it not held back)
    const asked = slack.message({ ...inThread, user: 'U0ALICE', text: 'deploy now?' });
    await lookup.arrived;
    const answered = slack.message({ ...inThread, user: 'U0BOB', text: 'go ahead' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    lookup.release();
    await handled(Promise.all([asked, answered]));

    // then the thread holds her turn, under her name, before his
    const thread = await turns(`${inGeneral}:${THREAD}`);
    expect(thread.map((turn) => [turn.participant.displayName, turn.content])).toEqual([
      ['Alice', 'deploy now?'],
      ['Bob', 'go ahead'],
    ]);
    expect(errors).toEqual([]);
  });

  it('answers a turn of another conversation while one author is looked up', async () => {
    // given a bot, and a slow users.info for Alice, who asks in a thread
    await startBot();
    const lookup = slack.holdNext('users.info');
    const asked = slack.mention({
      channel: GENERAL,
      thread_ts: '1773226800.000100',
      user: 'U0ALICE',
      text: 'deploy now?',
    });
    await lookup.arrived;

    // when Bob asks in the channel itself meanwhile
    await slack.mention({ channel: GENERAL, user: 'U0BOB', text: 'quick one' });

    // then he is answered before her lookup ends (the bot is not idle before it does), and
    // she after it
    await slack.waitForPosted(1);
    expect(slack.posted.map((post) => post.thread_ts)).toEqual([undefined]);
    lookup.release();
    await handled(asked);
    expect(slack.posted).toHaveLength(2);
    expect(errors).toEqual([]);
  });

  it('ignores the echo of its own reply', async () => {
    slack.echoBotMessages = true;
    await startBot();
    await handled(slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'ping' }));
    await slack.idle();

    const echo = slack.deliveries[2];
    expect(echo).toMatchObject({ status: 200 });
    expect(slack.posted).toHaveLength(1);
    expect((await turns(inGeneral)).map((t) => t.participant.id)).toEqual([
      'slack:U0ALICE',
      'support-agent',
    ]);
  });

  it('splits a long answer into parts of at most 4000 characters with code blocks intact', async () => {
    await startBot();
    agent.reply =
      'Here is the script:\n\n```sh\n' +
      'echo "line of output"\n'.repeat(400) +
      '```\n\nRun it twice.';
    await handled(slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'the script?' }));

    expect(slack.posted.length).toBeGreaterThan(1);
    for (const post of slack.posted) {
      expect(post.text.length).toBeLessThanOrEqual(4000);
      expect((post.text.match(/^```/gm) ?? []).length % 2).toBe(0);
    }
    const [, answered] = await turns(inGeneral);
    expect(answered?.content).toBe(agent.reply);
    expect(answered?.metadata.partMessageIds).toEqual(slack.posted.slice(1).map((p) => p.ts));
  });

  it('waits out a 429 and then answers', async () => {
    await startBot();
    slack.failNext('chat.postMessage', { status: 429, retryAfter: 1 });
    await handled(slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'busy?' }));

    expect(slack.posted).toHaveLength(1);
    expect(slack.calls.filter((c) => c.method === 'chat.postMessage')).toHaveLength(2);
    expect(await turns(inGeneral)).toHaveLength(2);
    expect(errors).toEqual([]);
  });

  it('reports a refused post as a PlatformError with the Slack code and keeps running', async () => {
    await startBot();
    slack.failNext('chat.postMessage', { error: 'not_in_channel' });
    await handled(slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'first' }));
    await handled(slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'second' }));

    expect(errors[0]).toBeInstanceOf(PlatformError);
    expect(errors[0]).toMatchObject({ platform: 'slack', code: 'not_in_channel' });
    expect(slack.posted).toHaveLength(1);
    expect((await turns(inGeneral)).map((t) => t.participant.id)).toEqual([
      'slack:U0ALICE',
      'slack:U0ALICE',
      'support-agent',
    ]);
  });

  it('reports a malformed event, skips it and keeps answering', async () => {
    await startBot();
    await handled(slack.sendEvent({ type: 'message', channel: GENERAL, text: 'who wrote me?' }));
    await handled(slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'still there?' }));

    expect(errors.map((e) => e.constructor)).toEqual([MalformedEventError]);
    expect(slack.posted).toHaveLength(1);
    expect(await turns(inGeneral)).toHaveLength(2);
  });

  it('answers 401 to a badly signed request and stores nothing', async () => {
    await startBot();
    const { delivery } = await handled(
      slack.message(
        { channel: GENERAL, user: 'U0ALICE', text: '<@U0BOT> forged' },
        { signingSecret: 'guessed' },
      ),
    );

    expect(delivery.status).toBe(401);
    expect(await turns(inGeneral)).toEqual([]);
    expect(slack.posted).toEqual([]);
  });

  it('answers with the default fast acknowledgement too', async () => {
    await startBot();
    await handled(slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'quick?' }));

    await slack.waitForPosted(1);
    expect(slack.posted).toMatchObject([{ channel: GENERAL, text: 'On it.' }]);
  });

  it('receives a mention over Socket Mode, acknowledges it and answers', async () => {
    await startBot({ appToken: slack.appToken, signingSecret: undefined });
    await slack.waitForSocket();
    const { deliveries } = await handled(
      slack.mention({
        channel: GENERAL,
        user: 'U0ALICE',
        text: 'over the socket',
      }),
    );

    await slack.waitForPosted(1);
    expect(slack.acks).toEqual(deliveries.map((d) => d.envelopeId));
    expect(slack.posted).toMatchObject([{ channel: GENERAL, text: 'On it.' }]);
    await bot.stop();
    expect(await turns(inGeneral)).toHaveLength(2);
  });
});
