import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SendHook } from 'colloquy';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';
import { lossyHop, type LossyHop } from '../../fixtures/lossy-hop.js';
import { tempDirs } from '../../fixtures/temp-dirs.js';
import { PostBots, scheduledPostSurvivesRestart } from '../posts.fixtures.js';

const temp = tempDirs();

describe('posts the bot starts on Telegram (grammy against FakeTelegram, SQLite file)', () => {
  let telegram: FakeTelegram;
  let bots: PostBots<TelegramChannel>;
  /** Where the bot's channel sends its requests: the fake, or a hop in front of it. */
  let apiRoot: string;
  let hop: LossyHop | undefined;

  beforeEach(async () => {
    telegram = await FakeTelegram.start();
    apiRoot = telegram.apiRoot;
    const channel = () =>
      new TelegramChannel({
        token: telegram.token,
        client: { apiRoot },
        pollingTimeoutSeconds: 1,
        retry: { baseDelayMs: 5 },
      });
    bots = new PostBots(join(temp.make('posts'), 'bot.db'), channel);
  });

  afterEach(async () => {
    await bots.stopAll();
    await hop?.close();
    hop = undefined;
    await telegram.close();
  });

  const startBot = (sendHooks: SendHook[] = []) => bots.start({ sendHooks });

  it('posts into a DM it opens, recorded sent with its origin and the platform id', async () => {
    const { bot, store } = await startBot();
    const dm = await bot.openDm('telegram', '1001');
    expect(dm).toBe('telegram:1001');

    const receipt = await bot.send(dm, 'Your order shipped.');

    const [sent] = await telegram.waitForSent(1);
    expect(sent).toMatchObject({
      method: 'sendMessage',
      chatId: 1001,
      text: 'Your order shipped.',
    });
    expect(receipt).toMatchObject({
      status: 'sent',
      messageIds: [String(sent!.message.message_id)],
    });
    const turn = await store.getMessage(dm, receipt.id);
    expect(turn).toMatchObject({
      delivery: 'sent',
      scope: 'dm',
      participant: { kind: 'agent', id: expect.stringMatching(/^telegram:/) },
      metadata: { origin: 'post', channelId: '1001', messageId: receipt.messageIds[0] },
    });
    expect(await store.getPosts()).toMatchObject([{ id: receipt.id, status: 'sent' }]);
    expect(bots.errors).toEqual([]);
  });

  it('passes a post through the send hooks: a masked text is what is posted and recorded, a refused one is not sent', async () => {
    const seen: string[] = [];
    const mask: SendHook = (reply, send, about) => {
      seen.push(
        `${String(reply.metadata.origin)} ${about.inbound === undefined ? 'no inbound' : 'inbound'}`,
      );
      if (reply.content.includes('secret')) throw new Error('refused by policy');
      return send({ ...reply, content: reply.content.replace(/\S+@\S+/g, '[email]') });
    };
    const { bot, store } = await startBot([mask]);

    const receipt = await bot.send('telegram:1001', 'Write to ann@example.com');
    const [sent] = await telegram.waitForSent(1);
    expect(sent).toMatchObject({ chatId: 1001, text: 'Write to [email]' });
    expect(await store.getMessage('telegram:1001', receipt.id)).toMatchObject({
      content: 'Write to [email]',
      delivery: 'sent',
    });

    await expect(bot.send('telegram:1001', 'the secret is 4242')).rejects.toThrow(
      'refused by policy',
    );
    await bot.idle();
    expect(telegram.sent).toHaveLength(1);
    expect((await store.get('telegram:1001')).map((t) => t.content)).toEqual(['Write to [email]']);
    expect(seen).toEqual(['post no inbound', 'post no inbound']);
  });

  it('posts into a forum topic of a group', async () => {
    const { bot } = await startBot();
    await bot.send('telegram:-1001234567890:7', 'Standup in 5 minutes');
    const [sent] = await telegram.waitForSent(1);
    expect(sent).toMatchObject({ chatId: -1001234567890, payload: { message_thread_id: 7 } });
  });

  it('refuses a conversation no channel knows, and an ephemeral post, with one line', async () => {
    const { bot, store } = await startBot();
    await expect(bot.send('slack:T1:C1', 'hello')).rejects.toThrow(
      'no channel of this bot (telegram) knows conversation slack:T1:C1',
    );
    await expect(bot.send('telegram:1001', { content: 'psst', visibleTo: '1001' })).rejects.toThrow(
      'the telegram channel cannot show a post to one person only (visibleTo)',
    );
    await expect(bot.openDm('telegram', 'ada')).rejects.toThrow('positive number');
    expect(await store.getPosts()).toEqual([]);
    expect(telegram.sent).toEqual([]);
  });

  it('sends a post that came due while the bot was stopped when a new bot starts', async () => {
    await scheduledPostSurvivesRestart(bots, 'telegram:1001', () =>
      telegram.sent.map((sent) => ({ text: sent.text, id: String(sent.message.message_id) })),
    );
    expect(telegram.sent).toMatchObject([{ chatId: 1001 }]);
  });

  it('sends a scheduled post once it is due while the bot runs', async () => {
    const { bot } = await startBot();
    await bot.send('telegram:1001', 'Follow-up: did the fix work?', {
      at: new Date(Date.now() + 200),
    });
    const [sent] = await telegram.waitForSent(1);
    expect(sent).toMatchObject({ chatId: 1001, text: 'Follow-up: did the fix work?' });
  });

  const invoice = {
    content: '',
    files: [
      { name: 'invoice-4711.pdf', data: Buffer.from('%PDF-1.7 4711'), mimeType: 'application/pdf' },
    ],
  };

  it('records a post of a file alone failed when Telegram refuses its upload', async () => {
    // given Telegram refusing the next upload
    const { bot, store } = await startBot();
    telegram.failNext('sendDocument', {
      error_code: 400,
      description: 'Bad Request: chat not found',
    });

    // when the bot posts a file alone, then it is refused with Telegram's answer
    await expect(bot.send('telegram:1001', invoice)).rejects.toThrow(
      'not sent: invoice-4711.pdf: Telegram refused a file upload: Bad Request: chat not found',
    );

    // and the post is recorded failed, with nothing shown: a post that never went out is no turn
    const [post] = await store.getPosts();
    expect(post).toMatchObject({ status: 'failed' });
    expect(await store.getMessage('telegram:1001', post!.id)).toBeUndefined();
    expect(telegram.uploads).toEqual([]);
  });

  it('records a post of a file alone unconfirmed when the answer to its upload is lost', async () => {
    // given a hop that loses Telegram's answer to the first upload, after Telegram showed the file
    hop = await lossyHop(telegram.apiRoot, (req) => req.url?.endsWith('/sendDocument') === true);
    apiRoot = hop.origin;
    const { bot, store } = await startBot();

    // when the bot posts a file alone, then it is refused as not known to have gone out
    await expect(bot.send('telegram:1001', invoice)).rejects.toThrow(
      /^not sent: invoice-4711\.pdf: Could not reach Telegram/,
    );

    // and Telegram shows it once, and the record says it may have gone out
    expect(hop.lost()).toBe(1);
    expect(telegram.uploads).toHaveLength(1);
    const [post] = await store.getPosts();
    expect(post).toMatchObject({ status: 'unconfirmed' });
    expect(await store.getMessage('telegram:1001', post!.id)).toMatchObject({
      delivery: 'unconfirmed',
    });
  });
});
