import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot } from 'colloquy';
import type { SlackChannelOptions } from 'colloquy/slack';
import { FakeSlack } from 'colloquy/testing';
import { GatedAgent } from '../../fixtures/gated-agent.js';
import { slackBotOn } from './slack.fixtures.js';

const GENERAL = 'C0GENERAL';
const DM = 'D0ALICE';

describe('what Slack shows while the agent works (Bolt against FakeSlack)', () => {
  let slack: FakeSlack;
  let agent: GatedAgent;
  let bot: Bot;

  beforeEach(async () => {
    slack = await FakeSlack.start();
    agent = new GatedAgent('On it.');
  });

  afterEach(async () => {
    agent.release();
    await bot.stop();
    await slack.close();
  });

  async function startBot(options: Partial<SlackChannelOptions> = {}) {
    const clientOptions = { slackApiUrl: slack.slackApiUrl, retryConfig: { retries: 0 } };
    bot = await slackBotOn(slack, agent, { clientOptions, ...options });
  }

  it('sets the thread status "is thinking…" while answering a mention in its thread, cleared by the reply', async () => {
    await startBot();
    const { event } = await slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'status?' });
    const thread = `${GENERAL}:${String(event.ts)}`;
    await agent.started;
    await slack.waitFor(() => slack.statuses.has(thread));
    expect(slack.statuses.get(thread)).toBe('is thinking…');
    agent.release();
    const [reply] = await slack.waitForPosted(1);
    expect(reply).toMatchObject({ channel: GENERAL, thread_ts: event.ts, text: 'On it.' });
    await bot.idle();
    expect(slack.statuses.has(thread)).toBe(false);
    expect(slack.reactions).toEqual([]);
  });

  it('reacts with 👀 to a DM answered at its top level, and takes the reaction back when done', async () => {
    await startBot();
    const { event } = await slack.message({ channel: DM, user: 'U0ALICE', text: 'hi' });
    await agent.started;
    await slack.waitFor(() => slack.reactions.length > 0);
    expect(slack.reactions).toEqual([{ channel: DM, timestamp: event.ts, name: 'eyes' }]);
    agent.release();
    await slack.waitForPosted(1);
    await slack.waitFor(() => slack.reactions.length === 0);
    expect(slack.calls.map((call) => call.method)).toContain('reactions.remove');
  });

  it('falls back to the reaction where Slack refuses the thread status', async () => {
    await startBot({ typing: { reaction: 'hourglass_flowing_sand' } });
    slack.failNext('assistant.threads.setStatus', { error: 'missing_scope' });
    const { event } = await slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'status?' });
    await agent.started;
    await slack.waitFor(() => slack.reactions.length > 0);
    expect(slack.reactions).toEqual([
      { channel: GENERAL, timestamp: event.ts, name: 'hourglass_flowing_sand' },
    ]);
  });
});
