import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeSlack } from 'colloquy/testing';
import type { FakeSlackOptions } from 'colloquy/testing';
import {
  interactionAgents,
  LONG_ID,
  longIdAsker,
  pressesOf,
  sizeAsker,
  streaming,
} from '../interactions.fixtures.js';
import { startSlackBot } from './slack.fixtures.js';

const GENERAL = 'C0GENERAL';
const inGeneral = `slack:T0FAKE:${GENERAL}`;

describe('commands and buttons on Slack (Bolt against FakeSlack)', () => {
  let slack: FakeSlack;
  let dir: string;
  let store: SqliteConversationStore;
  let bot: Bot;
  let agents: ReturnType<typeof interactionAgents>;

  async function startBot(fake: FakeSlackOptions = {}, socket = false) {
    slack = await FakeSlack.start(fake);
    const { support, billing, commands } = agents;
    const options = { agents: [support, billing], commands, store };
    ({ bot } = await startSlackBot(slack, options, {}, socket ? 'socket' : 'http'));
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'colloquy-slack-interactions-'));
    store = new SqliteConversationStore({ path: join(dir, 'colloquy.db') });
    agents = interactionAgents();
  });

  afterEach(async () => {
    await bot?.stop();
    await slack.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('acknowledges a signed slash command in time and has its agent answer it', async () => {
    await startBot();
    const ack = await slack.interactions.command({
      channel: GENERAL,
      user: 'U0ALICE',
      command: '/status',
      text: '4242',
    });
    expect(ack).toEqual({ kind: 'command', status: 200, inTime: true });
    await bot.idle();
    expect(slack.posted.map((p) => p.text)).toEqual(['support: /status 4242']);
    const [turn] = await store.get(inGeneral, { participantIds: ['slack:U0ALICE'] });
    expect(turn).toMatchObject({
      content: '/status 4242',
      metadata: {
        interaction: { type: 'command', name: 'status', args: '4242', agent: 'support' },
      },
    });
  });

  it('routes a Block Kit press to the agent that posted the buttons, once for a double press', async () => {
    await startBot();
    await slack.interactions.command({
      channel: GENERAL,
      user: 'U0ALICE',
      command: '/refund',
      text: '9',
    });
    await bot.idle();
    const [asked] = slack.posted;
    expect(JSON.parse(asked!.params.blocks as string)).toEqual([
      { type: 'section', text: { type: 'mrkdwn', text: 'Refund order 9?' } },
      {
        type: 'actions',
        elements: [
          {
            type: 'button',
            action_id: 'approve',
            text: { type: 'plain_text', text: 'Approve' },
            value: 'approve',
            style: 'primary',
          },
          {
            type: 'button',
            action_id: 'deny',
            text: { type: 'plain_text', text: 'Deny' },
            value: 'deny',
            style: 'danger',
          },
        ],
      },
    ]);
    const presses = await Promise.all([
      slack.interactions.press({ ts: asked!.ts, user: 'U0ALICE', actionId: 'approve' }),
      slack.interactions.press({ ts: asked!.ts, user: 'U0ALICE', actionId: 'approve' }),
    ]);
    expect(presses.map((p) => p.inTime)).toEqual([true, true]);
    await bot.idle();
    expect(slack.posted.map((p) => p.text)).toEqual(['Refund order 9?', 'billing: approve']);
    expect(agents.support.turns).toHaveLength(0);
  });

  it('answers a changed choice in a select, the same choice twice once, and a payload sent again once', async () => {
    agents.support = sizeAsker();
    await startBot();
    await slack.interactions.command({ channel: GENERAL, user: 'U0ALICE', command: '/status' });
    await bot.idle();
    const [asked] = slack.posted;
    const pick = (value: string, triggerId?: string) =>
      slack.interactions.press({
        ts: asked!.ts,
        user: 'U0ALICE',
        actionId: 'size',
        value,
        ...(triggerId !== undefined && { triggerId }),
      });
    await pick('s', 'trigger-small');
    await pick('l');
    await pick('l');
    await pick('s', 'trigger-small');
    await bot.idle();
    await pick('s');
    await bot.idle();
    expect(slack.posted.map((p) => p.text)).toEqual(['Which size?', 'size s', 'size l', 'size s']);
    const turns = await store.get(inGeneral, { participantIds: ['slack:U0ALICE'] });
    expect(pressesOf(turns)).toEqual([
      ['s', undefined],
      ['l', undefined],
      ['l', 'repeated'],
      ['s', undefined],
    ]);
  });

  it('takes commands and presses over Socket Mode too', async () => {
    await startBot({}, true);
    await slack.interactions.command({
      channel: GENERAL,
      user: 'U0ALICE',
      command: '/refund',
      text: '3',
    });
    await bot.idle();
    const ack = await slack.interactions.press({
      ts: slack.posted[0]!.ts,
      user: 'U0ALICE',
      actionId: 'deny',
    });
    expect(ack.inTime).toBe(true);
    await bot.idle();
    expect(slack.posted.map((p) => p.text)).toEqual(['Refund order 3?', 'billing: deny']);
  });

  it('answers a command it does not know with a clear line', async () => {
    await startBot();
    await slack.interactions.command({ channel: GENERAL, user: 'U0ALICE', command: '/frobnicate' });
    await bot.idle();
    expect(slack.posted.map((p) => p.text)).toEqual([
      'There is no /frobnicate command; try /refund, /status, /ping.',
    ]);
  });

  it('refuses a press by someone else with one line', async () => {
    await startBot();
    await slack.interactions.command({
      channel: GENERAL,
      user: 'U0ALICE',
      command: '/refund',
      text: '5',
    });
    await bot.idle();
    await slack.interactions.press({ ts: slack.posted[0]!.ts, user: 'U0BOB', actionId: 'approve' });
    await bot.idle();
    expect(slack.posted.map((p) => p.text)).toEqual([
      'Refund order 5?',
      'Those buttons are for the person the message answered.',
    ]);
  });

  it('refuses a slash command with a bad signature and records nothing', async () => {
    await startBot();
    const ack = await slack.interactions.command({
      channel: GENERAL,
      user: 'U0ALICE',
      command: '/status',
      signingSecret: 'forged',
    });
    expect(ack.status).toBe(401);
    await bot.idle();
    expect(slack.posted).toEqual([]);
    expect(await store.get(inGeneral)).toEqual([]);
  });

  it('catches an acknowledgement that comes after the deadline', async () => {
    await startBot({ ackDeadlineMs: 0 });
    const ack = await slack.interactions.command({
      channel: GENERAL,
      user: 'U0ALICE',
      command: '/ping',
    });
    expect(ack).toEqual({ kind: 'command', status: 200, inTime: false });
  });

  const blocksOf = (ts: string) =>
    JSON.parse(slack.posted.find((p) => p.ts === ts)!.params.blocks as string) as unknown[];

  const refund = (text: string) =>
    slack.interactions.command({ channel: GENERAL, user: 'U0ALICE', command: '/refund', text });

  it('shows the choice in place of the buttons once a press is answered, and records that as an edit', async () => {
    await startBot();
    await refund('9');
    await bot.idle();
    const [asked] = slack.posted;
    await slack.interactions.press({ ts: asked!.ts, user: 'U0ALICE', actionId: 'approve' });
    await bot.idle();
    expect(blocksOf(asked!.ts)).toEqual([
      { type: 'section', text: { type: 'mrkdwn', text: 'Refund order 9?' } },
      { type: 'context', elements: [{ type: 'plain_text', text: '✓ Approve' }] },
    ]);
    const replies = await store.get(inGeneral, { participantIds: ['billing'] });
    const question = replies.find((r) => r.metadata.messageId === asked!.ts);
    expect(question).toMatchObject({ content: 'Refund order 9?', editedAt: expect.any(String) });
  });

  it('carries an action_id longer than Slack allows as its place, and routes the press by it', async () => {
    agents.billing = longIdAsker();
    await startBot();
    await refund('1');
    await bot.idle();
    const [asked] = slack.posted;
    expect(blocksOf(asked!.ts)[1]).toMatchObject({
      elements: [{ action_id: '#0', value: LONG_ID }],
    });
    await slack.interactions.press({ ts: asked!.ts, user: 'U0ALICE', actionId: '#0' });
    await bot.idle();
    expect(slack.posted.map((p) => p.text)).toEqual(['Refund?', 'billing: the long one']);
  });

  it('shows the buttons of a streamed reply under its final text', async () => {
    agents.billing = streaming(agents.billing);
    await startBot();
    await refund('9');
    await bot.idle();
    const [asked] = slack.posted;
    expect(asked!.text).toBe('Refund order 9?');
    // Posted with the first words and no buttons, then updated: the last update adds them.
    const first = slack.calls.find((c) => c.method === 'chat.postMessage');
    expect(first!.params).toMatchObject({ text: 'Refund order' });
    expect(first!.params.blocks).toBeUndefined();
    expect(blocksOf(asked!.ts)[1]).toMatchObject({
      type: 'actions',
      elements: [{ action_id: 'approve' }, { action_id: 'deny' }],
    });
    await slack.interactions.press({ ts: asked!.ts, user: 'U0ALICE', actionId: 'deny' });
    await bot.idle();
    expect(slack.posted.map((p) => p.text)).toEqual(['Refund order 9?', 'billing: deny']);
  });
});

describe('the line Slack shows in place of answered buttons', () => {
  it('shows a label as plain text, so a ping or a link in it stays text', async () => {
    const { usedBlocks } = await import('../../../channels/slack/interactions.js');
    const label = '<!channel> <https://evil.example|Approve>';
    expect(usedBlocks('Refund?', label).at(-1)).toEqual({
      type: 'context',
      elements: [{ type: 'plain_text', text: `✓ ${label}` }],
    });
  });
});
