import { LogLevel } from '@slack/bolt';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BaseAgent,
  Bot,
  InMemoryConversationStore,
  type ColloquyError,
  type StoredMessage,
} from 'colloquy';
import { SlackChannel, type SlackChannelOptions } from 'colloquy/slack';
import { FakeSlack, type FakeSlackOptions } from 'colloquy/testing';
import { answer } from '../../fixtures/model-answer.js';

// Events shaped as Slack's Events API sends them (assistant threads in a DM, thread replies,
// Enterprise Grid envelopes, Slackbot notices), through Bolt against FakeSlack.

const TEAM = 'T0FAKE';
const GENERAL = 'C0GENERAL';
const DM = 'D0ALICE';

class SupportAgent extends BaseAgent {
  name = 'support-agent';
  description = 'Answers questions in Slack';
  instructions = 'Be brief.';
  override model = new MockLanguageModelV3({ doGenerate: async () => answer('On it.') });
}

let slack: FakeSlack | undefined;
let bot: Bot | undefined;
let errors: ColloquyError[] = [];

async function start(
  fake: FakeSlackOptions = {},
  options: Partial<SlackChannelOptions> = {},
): Promise<{ slack: FakeSlack; bot: Bot }> {
  slack = await FakeSlack.start(fake);
  const channel = new SlackChannel({
    token: slack.token,
    signingSecret: slack.signingSecret,
    port: 0,
    host: '127.0.0.1',
    logLevel: LogLevel.ERROR,
    clientOptions: { slackApiUrl: slack.slackApiUrl, retryConfig: { retries: 0 } },
    ...options,
  });
  bot = new Bot({
    channels: [channel],
    agents: [new SupportAgent()],
    store: new InMemoryConversationStore(),
  });
  errors = [];
  bot.catch((error) => void errors.push(error));
  await bot.start();
  slack.eventsUrl = channel.eventsUrl;
  return { slack, bot };
}

/** A delivery, then everything the bot does about it (the HTTP answer only waits for the commit). */
async function handled<T>(delivery: Promise<T>): Promise<T> {
  const result = await delivery;
  await bot?.idle();
  return result;
}

const turns = (conversationId: string): Promise<StoredMessage[]> =>
  (bot as Bot).store.get(conversationId, { includeDeleted: true });

afterEach(async () => {
  await bot?.stop();
  await slack?.close();
  bot = undefined;
  slack = undefined;
});

describe('Slack DM threads', () => {
  it('answers a message in a thread of a DM, in that thread, as a DM', async () => {
    const { slack } = await start();
    const parent = slack.nextTs();
    await handled(
      slack.message({
        channel: DM,
        channel_type: 'im',
        user: 'U0ALICE',
        text: 'and what about returns?',
        thread_ts: parent,
        parent_user_id: 'U0BOT',
      }),
    );

    expect(slack.posted).toMatchObject([{ channel: DM, text: 'On it.', thread_ts: parent }]);
    const stored = await turns(`slack:${TEAM}:${DM}:${parent}`);
    expect(stored.map((t) => [t.scope, t.participant.id])).toEqual([
      ['dm', 'slack:U0ALICE'],
      ['dm', 'support-agent'],
    ]);
    expect(errors).toEqual([]);
  });
});

describe('where Slack replies go', () => {
  it('answers a channel mention in a thread of that mention', async () => {
    const { slack } = await start();
    const { event } = await handled(
      slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'status?' }),
    );
    const ts = event.ts as string;

    expect(slack.posted).toMatchObject([{ channel: GENERAL, text: 'On it.', thread_ts: ts }]);
    const [asked] = await turns(`slack:${TEAM}:${GENERAL}`);
    expect(asked).toMatchObject({ scope: 'channel', metadata: { messageId: ts } });
    const [answered] = await turns(`slack:${TEAM}:${GENERAL}:${ts}`);
    expect(answered).toMatchObject({
      id: `slack:${TEAM}:${GENERAL}:${ts}:support-agent:reply`,
      scope: 'thread',
      participant: { id: 'support-agent' },
      metadata: { threadId: ts, replyToMessageId: ts, replyToParticipantId: 'slack:U0ALICE' },
    });
    expect(errors).toEqual([]);
  });

  it('answers at top level with replyInThread: false', async () => {
    const { slack } = await start({}, { replyInThread: false });
    await handled(slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'status?' }));

    expect(slack.posted).toHaveLength(1);
    expect(slack.posted[0]?.thread_ts).toBeUndefined();
    const stored = await turns(`slack:${TEAM}:${GENERAL}`);
    expect(stored.map((t) => [t.scope, t.participant.id])).toEqual([
      ['channel', 'slack:U0ALICE'],
      ['channel', 'support-agent'],
    ]);
  });

  it('keeps a reply to a mention inside a thread in that thread', async () => {
    const { slack } = await start();
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
    expect(await turns(`slack:${TEAM}:${GENERAL}:${parent}`)).toHaveLength(2);
  });

  it('answers a DM at top level', async () => {
    const { slack } = await start();
    await handled(slack.message({ channel: DM, user: 'U0ALICE', text: 'hello' }));

    expect(slack.posted).toHaveLength(1);
    expect(slack.posted[0]?.thread_ts).toBeUndefined();
  });
});

describe('Slack Enterprise Grid', () => {
  it('keys the reply with the team of the conversation it answers, not the one auth.test gives', async () => {
    // an org-wide install: auth.test answers with the organisation, events carry the workspace
    const { slack } = await start({ enterprise: { id: 'E0ORG', orgWideInstall: true } });
    await handled(slack.message({ channel: DM, user: 'U0ALICE', text: 'hello' }));
    const { event } = await handled(
      slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'status?' }),
    );

    const dm = await turns(`slack:${TEAM}:${DM}`);
    expect(dm.map((t) => t.id)).toEqual([
      expect.stringMatching(`^slack:${TEAM}:${DM}:`),
      expect.stringMatching(`^slack:${TEAM}:${DM}:.*:support-agent:reply$`),
    ]);
    expect(dm[1]?.metadata.messageId).toBe(slack.posted[0]?.ts);
    const thread = await turns(`slack:${TEAM}:${GENERAL}:${event.ts as string}`);
    expect(thread.map((t) => t.id)).toEqual([
      `slack:${TEAM}:${GENERAL}:${event.ts as string}:support-agent:reply`,
    ]);
    expect(thread[0]?.metadata.messageId).toBe(slack.posted[1]?.ts);
    const { items: all } = await (bot as Bot).store.listConversations();
    expect(all.map((c) => c.id).sort()).toEqual(
      [
        `slack:${TEAM}:${DM}`,
        `slack:${TEAM}:${GENERAL}`,
        `slack:${TEAM}:${GENERAL}:${event.ts as string}`,
      ].sort(),
    );
    expect(errors).toEqual([]);
  });
});

describe('Slackbot', () => {
  it('stores a Slackbot notice as a system turn and does not answer it', async () => {
    const { slack } = await start();
    await handled(
      slack.message({
        channel: DM,
        channel_type: 'im',
        user: 'USLACKBOT',
        text: 'You have been removed from #secret-plans by <@U0BOB>',
      }),
    );

    expect(slack.posted).toEqual([]);
    const [notice] = await turns(`slack:${TEAM}:${DM}`);
    expect(notice).toMatchObject({
      participant: { kind: 'system', id: 'slack:USLACKBOT', displayName: 'Slackbot' },
      content: 'You have been removed from #secret-plans by @Bob',
      scope: 'dm',
    });
    expect(errors).toEqual([]);
  });
});
