import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot } from 'colloquy';
import { FakeDiscord, type FakeDiscordUser } from 'colloquy/testing';
import { ApprovalScene } from '../../agents/approval.fixtures.js';
import { addGeneral, GENERAL, startDiscordBot } from './discord.fixtures.js';

const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };
const commands = [{ name: 'refund', description: 'Refund an order', agent: 'billing' }];

describe('tool approval on Discord (discord.js against FakeDiscord)', () => {
  let discord: FakeDiscord;
  let scene: ApprovalScene;
  let bot: Bot;

  async function startBot() {
    ({ bot } = await startDiscordBot(discord, { ...scene.open(), commands }));
  }

  async function restart() {
    await bot.stop();
    await scene.store.close();
    await startBot();
  }

  beforeEach(async () => {
    scene = new ApprovalScene();
    discord = await FakeDiscord.start();
    addGeneral(discord);
    await startBot();
  });

  afterEach(async () => {
    await bot?.stop();
    await discord.close();
    await scene.close();
  });

  it('asks with Approve / Deny and runs the tool on Approve after a restart', async () => {
    discord.interactions.command({
      channelId: GENERAL,
      user: alice,
      name: 'refund',
      options: { order: '4242' },
    });
    const [asked] = await discord.waitForPosted(1);
    await bot.idle();
    expect(asked!.content).toBe('May I run refund_order {"orderId":"4242"}?');
    const [row] = asked!.components as { components: { label: string; custom_id: string }[] }[];
    expect(row!.components.map((b) => b.label)).toEqual(['Approve', 'Deny']);

    await restart();
    const approve = row!.components[0]!.custom_id;
    discord.interactions.press({ messageId: asked!.id, user: alice, customId: approve });
    const [, done] = await discord.waitForPosted(2);
    await bot.idle();

    expect(done!.content).toBe('Done: {"refunded":"4242"}');
    expect(scene.refunds).toEqual(['4242']);
  });
});
