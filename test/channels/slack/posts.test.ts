import { join } from 'node:path';
import { LogLevel } from '@slack/bolt';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assemblePrompt, Bot, silentLogger, type ColloquyError } from 'colloquy';
import { SlackChannel } from 'colloquy/slack';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeSlack } from 'colloquy/testing';
import { tempDirs } from '../../fixtures/temp-dirs.js';

const temp = tempDirs();
const inGeneral = 'slack:T0FAKE:C0GENERAL';

describe('posts the bot starts on Slack (Bolt against FakeSlack, SQLite file)', () => {
  let slack: FakeSlack;
  let path: string;
  let bots: Bot[];
  let stores: SqliteConversationStore[];
  let errors: ColloquyError[];

  beforeEach(async () => {
    slack = await FakeSlack.start();
    slack.addUser('U0ALICE', 'alice');
    path = join(temp.make('slack-posts'), 'bot.db');
    bots = [];
    stores = [];
    errors = [];
  });

  afterEach(async () => {
    for (const bot of bots) await bot.stop();
    for (const store of stores) await store.close();
    await slack.close();
  });

  async function startBot(): Promise<{ bot: Bot; store: SqliteConversationStore }> {
    const store = new SqliteConversationStore({ path });
    const channel = new SlackChannel({
      token: slack.token,
      signingSecret: slack.signingSecret,
      port: 0,
      host: '127.0.0.1',
      logLevel: LogLevel.ERROR,
      clientOptions: { slackApiUrl: slack.slackApiUrl },
    });
    const bot = new Bot({ channels: [channel], agents: [], store, logger: silentLogger });
    bot.catch((error) => void errors.push(error));
    bots.push(bot);
    stores.push(store);
    await bot.start();
    slack.eventsUrl = channel.eventsUrl;
    return { bot, store };
  }

  it('posts into a channel with the post id as its reply key, recorded sent as a post', async () => {
    const { bot, store } = await startBot();
    const receipt = await bot.send(inGeneral, 'Deploy finished.');
    const [posted] = slack.posted;
    expect(posted).toMatchObject({
      channel: 'C0GENERAL',
      text: 'Deploy finished.',
      metadata: { event_type: 'colloquy_reply', event_payload: { reply_id: receipt.id } },
    });
    expect(await store.getMessage(inGeneral, receipt.id)).toMatchObject({
      delivery: 'sent',
      scope: 'channel',
      metadata: { origin: 'post', messageId: posted!.ts },
    });
    expect(errors).toEqual([]);
  });

  it('opens a DM with conversations.open and posts into it', async () => {
    const { bot, store } = await startBot();
    const dm = await bot.openDm('slack', 'U0ALICE');
    expect(dm).toBe('slack:T0FAKE:D0ALICE');
    const receipt = await bot.send(dm, 'Your report is ready.');
    expect(slack.calls.map((call) => call.method)).toContain('conversations.open');
    expect(slack.posted).toMatchObject([{ channel: 'D0ALICE', text: 'Your report is ready.' }]);
    expect(await store.getMessage(dm, receipt.id)).toMatchObject({ scope: 'dm', delivery: 'sent' });
    await expect(bot.openDm('slack', 'U0NOBODY')).rejects.toThrow('user_not_found');
  });

  it('posts an ephemeral message with chat.postEphemeral, recorded as shown to one person', async () => {
    const { bot, store } = await startBot();
    const thread = `${inGeneral}:1700000000.000100`;
    const receipt = await bot.send(thread, { content: 'Only you see this.', visibleTo: 'U0ALICE' });
    expect(slack.posted).toMatchObject([
      { channel: 'C0GENERAL', thread_ts: '1700000000.000100', visibleTo: 'U0ALICE' },
    ]);
    expect(slack.posted[0]).not.toHaveProperty('metadata');
    expect(await store.getMessage(thread, receipt.id)).toMatchObject({
      delivery: 'sent',
      scope: 'thread',
      metadata: { origin: 'post', visibleTo: 'U0ALICE', threadId: '1700000000.000100' },
    });
  });

  it("leaves an agent's ephemeral post out of its prompt answering someone else, and keeps it answering that person", async () => {
    slack.addUser('U0BOB', 'bob');
    const { bot, store } = await startBot();
    await bot.send(
      inGeneral,
      {
        content: 'Only you see this: your reset code is 4242',
        visibleTo: 'U0ALICE',
      },
      { from: { id: 'support' } },
    );
    await slack.message({
      channel: 'C0GENERAL',
      user: 'U0BOB',
      text: 'support, what did you say?',
    });
    await slack.message({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'support, say it again' });
    await bot.idle();
    const turns = await store.get(inGeneral);
    const by = (user: string) => turns.find((t) => t.participant.id === `slack:${user}`)!;
    const prompt = async (user: string) =>
      JSON.stringify(
        (await assemblePrompt(store, inGeneral, 'support', 'support', { currentMessage: by(user) }))
          .messages,
      );
    expect(await prompt('U0BOB')).not.toContain('4242');
    expect(await prompt('U0ALICE')).toContain('4242');
  });

  it('settles a post a crash left sending by its metadata, without posting it twice', async () => {
    const first = await startBot();
    const receipt = await first.bot.send(inGeneral, 'Standup in 5 minutes');
    await first.bot.stop();
    await first.store.close();
    // As a crash leaves it: the platform has the post, the record still says sending.
    const db = new Database(path);
    db.prepare(`UPDATE messages SET delivery = 'sending', platform_message_id = NULL`).run();
    db.prepare(`UPDATE scheduled_posts SET status = 'pending'`).run();
    db.close();

    const second = await startBot();
    await second.bot.idle();

    expect(slack.posted).toHaveLength(1);
    expect(await second.store.getMessage(inGeneral, receipt.id)).toMatchObject({
      delivery: 'sent',
      metadata: { messageId: slack.posted[0]!.ts },
    });
    expect(await second.store.getPosts()).toMatchObject([{ status: 'sent' }]);
    expect(errors).toEqual([]);
  });
});
