import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiscordChannel } from 'colloquy/discord';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeDiscord, type FakeDiscordUser } from 'colloquy/testing';
import { crashAndRestart, type CrashMoment } from '../../fixtures/crash-image.js';

const GUILD = '81384788765712384';
const GENERAL = '290926798999357250';
const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };

describe('Discord: a reply a crash left unconfirmed is settled by its nonce', () => {
  let discord: FakeDiscord;
  let dir: string;
  let crash: ReturnType<typeof crashAndRestart>;

  beforeEach(async () => {
    discord = await FakeDiscord.start();
    discord.addGuild({ id: GUILD, name: 'Shop', channels: [{ id: GENERAL, name: 'general' }] });
    dir = mkdtempSync(join(tmpdir(), 'colloquy-discord-settle-'));
    crash = crashAndRestart(
      dir,
      () =>
        new DiscordChannel({
          token: discord.token,
          clientOptions: { rest: { api: discord.restApi } },
        }),
    );
  });

  afterEach(async () => {
    await crash.stop();
    await discord.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Alice asks; the bot is killed at `moment` of its reply's send; the file it left. */
  const crashWhileReplying = (moment: CrashMoment, reply?: string) =>
    crash.whileReplying(
      moment,
      () =>
        discord.userMessage({
          channelId: GENERAL,
          author: alice,
          content: `<@${discord.botUser.id}> where is my order?`,
          mentions: [discord.botUser],
        }),
      reply,
    );

  it('records the message Discord created before the crash, and posts nothing more', async () => {
    // given a bot killed after Discord created its reply, before the answer reached it
    const { image } = await crashWhileReplying('after the call');
    expect(discord.posted).toHaveLength(1);

    // when it starts again
    const settled = await crash.restartOn(image);

    // then the reply is the one message Discord has, recorded with its id, the run answered
    expect(discord.posted).toHaveLength(1);
    expect(settled).toMatchObject({
      delivery: 'sent',
      id: discord.posted[0]!.id,
      status: 'answered',
    });
  });

  it('posts the reply once when the crash came before Discord had it', async () => {
    // given a bot killed after recording its reply, before calling Discord
    const { image, asked } = await crashWhileReplying('before the call');
    expect(discord.posted).toHaveLength(0);

    // when it starts again
    const settled = await crash.restartOn(image);

    // then the recorded reply (not a new answer) is posted once, as a reply, and recorded
    expect(discord.posted.map((post) => post.content)).toEqual(['On it.']);
    expect(discord.posted[0]!.message_reference?.message_id).toBe(asked.id);
    expect(settled).toMatchObject({
      delivery: 'sent',
      id: discord.posted[0]!.id,
      status: 'answered',
    });
  });

  it('settles a split reply whose first part was confirmed and second created', async () => {
    // given a two-part reply: part one confirmed, part two created by Discord, then the crash
    const long = `${'a'.repeat(1500)}\n\n${'b'.repeat(1500)}`;
    const { image } = await crashWhileReplying('after the call', long);
    expect(discord.posted).toHaveLength(2);

    // when the bot starts again
    const settled = await crash.restartOn(image);

    // then both parts are recorded with Discord's ids and neither is posted twice
    expect(discord.posted).toHaveLength(2);
    expect(settled).toMatchObject({ delivery: 'sent', id: discord.posted[0]!.id });
    expect(settled.parts).toEqual([discord.posted[1]!.id]);
  });

  it('leaves a reply unconfirmed when it was recorded longer ago than Discord keeps a nonce', async () => {
    // given a reply recorded a quarter of an hour before the restart, cut off by the crash
    const { image } = await crashWhileReplying('before the call');
    const file = new SqliteConversationStore({ path: image });
    const longAgo = new Date(Date.now() - 15 * 60_000).toISOString();
    file.db.prepare("UPDATE messages SET timestamp = ? WHERE delivery = 'sending'").run(longAgo);
    await file.close();

    // when the bot starts again
    const settled = await crash.restartOn(image);

    // then it does not risk a second copy: nothing is posted, the reply stays unconfirmed
    expect(discord.posted).toHaveLength(0);
    expect(settled).toMatchObject({ delivery: 'unconfirmed', status: 'unconfirmed' });
  });
});

describe('FakeDiscord enforces nonces as Discord does', () => {
  it('answers a second post of the same nonce with the message the first created', async () => {
    const discord = await FakeDiscord.start();
    try {
      discord.addGuild({ id: GUILD, name: 'Shop', channels: [{ id: GENERAL, name: 'general' }] });
      const post = (content: string) =>
        fetch(`${discord.restApi}/v10/channels/${GENERAL}/messages`, {
          method: 'POST',
          headers: { authorization: `Bot ${discord.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ content, nonce: 'reply-1-part-0', enforce_nonce: true }),
        }).then((res) => res.json() as Promise<{ id: string; nonce?: string }>);

      const first = await post('hello');
      const again = await post('hello');

      expect(again).toEqual(first);
      expect(first.nonce).toBe('reply-1-part-0');
      expect(discord.posted).toHaveLength(1);
    } finally {
      await discord.close();
    }
  });
});
