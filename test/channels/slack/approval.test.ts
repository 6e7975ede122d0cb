import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot } from 'colloquy';
import { FakeSlack } from 'colloquy/testing';
import { ApprovalScene } from '../../agents/approval.fixtures.js';
import { startSlackBot } from './slack.fixtures.js';

const GENERAL = 'C0GENERAL';
const commands = [{ name: 'refund', description: 'Refund an order', agent: 'billing' }];

describe('tool approval on Slack (Bolt against FakeSlack)', () => {
  let slack: FakeSlack;
  let scene: ApprovalScene;
  let bot: Bot;

  async function startBot() {
    ({ bot } = await startSlackBot(slack, { ...scene.open(), commands }));
  }

  async function restart() {
    await bot.stop();
    await scene.store.close();
    await startBot();
  }

  beforeEach(async () => {
    scene = new ApprovalScene();
    slack = await FakeSlack.start();
    await startBot();
  });

  afterEach(async () => {
    await bot?.stop();
    await slack.close();
    await scene.close();
  });

  it('asks with Approve / Deny and runs the tool on Approve after a restart', async () => {
    await slack.interactions.command({
      channel: GENERAL,
      user: 'U0ALICE',
      command: '/refund',
      text: '4242',
    });
    await bot.idle();
    const [asked] = slack.posted;
    expect(asked!.text).toBe('May I run refund_order {"orderId":"4242"}?');
    const [, actions] = JSON.parse(asked!.params.blocks as string) as [
      unknown,
      { elements: { action_id: string; text: { text: string } }[] },
    ];
    expect(actions.elements.map((e) => e.text.text)).toEqual(['Approve', 'Deny']);

    await restart();
    const approve = actions.elements[0]!.action_id;
    const press = await slack.interactions.press({
      ts: asked!.ts,
      user: 'U0ALICE',
      actionId: approve,
    });
    expect(press.inTime).toBe(true);
    await bot.idle();

    expect(slack.posted.map((p) => p.text)).toEqual([
      'May I run refund_order {"orderId":"4242"}?',
      'Done: {"refunded":"4242"}',
    ]);
    expect(scene.refunds).toEqual(['4242']);
  });
});
