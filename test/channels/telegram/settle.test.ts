import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Chat, User } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InMemoryConversationStore } from 'colloquy';
import type { Agent, AgentResult, AgentRunContext } from 'colloquy';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';
import { crashAndRestart } from '../../fixtures/crash-image.js';
import { lossyHop, type LossyHop } from '../../fixtures/lossy-hop.js';
import { ScriptedAgent } from '../../fixtures/scripted-agent.js';
import { startedBot, type StartedBot } from '../../fixtures/started-bot.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const adaDm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };

describe('Telegram: a reply a crash left unconfirmed (no key, no history to read)', () => {
  let telegram: FakeTelegram;
  let dir: string;
  let crash: ReturnType<typeof crashAndRestart>;

  beforeEach(async () => {
    telegram = await FakeTelegram.start();
    dir = mkdtempSync(join(tmpdir(), 'colloquy-telegram-settle-'));
    crash = crashAndRestart(
      dir,
      () =>
        new TelegramChannel({
          token: telegram.token,
          client: { apiRoot: telegram.apiRoot },
          pollingTimeoutSeconds: 5,
        }),
    );
  });

  afterEach(async () => {
    await crash.stop();
    await telegram.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ask = () => telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'where is 4711?' });
  const replies = () => telegram.sent.filter((sent) => sent.method === 'sendMessage');

  it('by default never sends it again: at most once, recorded unconfirmed', async () => {
    // given a bot killed after Telegram took its reply, before the answer reached it
    const { image } = await crash.whileReplying('after the call', ask);

    // when it starts again with the defaults
    const settled = await crash.restartOn(image);

    // then the reply is not sent twice; the record says it may not have gone out
    expect(replies()).toHaveLength(1);
    expect(settled).toMatchObject({ delivery: 'unconfirmed', id: null, status: 'unconfirmed' });
  });

  it("with unconfirmedReplies: 'resend' sends a reply cut off before the call, once", async () => {
    // given a bot killed after recording its reply, before calling Telegram
    const { image } = await crash.whileReplying('before the call', ask);

    // when it starts again and re-sends unconfirmed replies
    const settled = await crash.restartOn(image, { unconfirmedReplies: 'resend' });

    // then Ada gets the recorded reply, recorded with its message id
    expect(replies().map((sent) => sent.text)).toEqual(['On it.']);
    expect(settled).toMatchObject({
      delivery: 'sent',
      id: String(replies()[0]!.message.message_id),
      status: 'answered',
    });
  });

  it("with unconfirmedReplies: 'resend' a reply Telegram had is sent twice (at least once)", async () => {
    // given a bot killed after Telegram took its reply
    const { image } = await crash.whileReplying('after the call', ask);

    // when it starts again and re-sends unconfirmed replies
    const settled = await crash.restartOn(image, { unconfirmedReplies: 'resend' });

    // then Ada has it twice: the price of never missing an answer where nothing can be found
    expect(replies()).toHaveLength(2);
    expect(settled).toMatchObject({ delivery: 'sent', status: 'answered' });
  });
});

describe('Telegram: a reply whose answer is lost while the bot runs', () => {
  let telegram: FakeTelegram;
  let hop: LossyHop;
  let started: StartedBot;

  afterEach(async () => {
    await started.bot.stop();
    await hop.close();
    await telegram.close();
  });

  it('is posted once and recorded unconfirmed (at most once, as after a crash)', async () => {
    // given a hop that loses Telegram's answer to the first sendMessage, after Telegram posted it
    telegram = await FakeTelegram.start();
    hop = await lossyHop(telegram.apiRoot, (req) => req.url?.endsWith('/sendMessage') === true);
    const store = new InMemoryConversationStore();
    const channel = new TelegramChannel({
      token: telegram.token,
      client: { apiRoot: hop.origin },
      pollingTimeoutSeconds: 1,
      retry: { baseDelayMs: 5 },
    });
    started = await startedBot(channel, {
      agents: [new ScriptedAgent({ output: 'On it.' })],
      store,
    });

    // when Ada asks and the bot answers
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'where is 4711?' });
    await telegram.waitForSent(1);
    await started.bot.idle();

    // then Telegram has the reply once, and the record says it may not have gone out
    expect(hop.lost()).toBe(1);
    expect(telegram.sent.filter((sent) => sent.method === 'sendMessage')).toHaveLength(1);
    const turns = await started.bot.store.get('telegram:1001');
    const reply = turns.find((turn) => turn.delivery !== undefined);
    expect(reply).toMatchObject({ content: 'On it.', delivery: 'unconfirmed' });
    const runs = await store.getRuns({ conversationId: 'telegram:1001' });
    expect(runs.map((run) => run.status)).toEqual(['unconfirmed']);
  });

  const whole = 'Looking it up: order 4711 ships Monday.';

  /** Starts a bot through `apiRoot` whose agent streams its first words, then (once posted) the rest. */
  async function streaming(apiRoot: string): Promise<void> {
    const streamer: Agent = {
      id: 'support',
      name: 'support',
      async run(_turn: unknown, ctx: AgentRunContext): Promise<AgentResult> {
        ctx.stream?.('Looking it up');
        await telegram.waitForSent(1);
        ctx.stream?.(whole);
        return { output: whole };
      },
    };
    const channel = new TelegramChannel({
      token: telegram.token,
      client: { apiRoot },
      pollingTimeoutSeconds: 1,
      retry: { baseDelayMs: 5 },
      drafts: false,
    });
    started = await startedBot(channel, {
      agents: [streamer],
      store: new InMemoryConversationStore(),
    });
  }

  it('records a streamed reply whole when the answer to its last edit is lost', async () => {
    // given a hop that loses Telegram's answer to the first editMessageText, after Telegram made it
    telegram = await FakeTelegram.start();
    hop = await lossyHop(telegram.apiRoot, (req) => req.url?.endsWith('/editMessageText') === true);
    await streaming(hop.origin);

    // when Ada asks, the first words are posted, and the edit with the rest is made but its answer lost
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'where is 4711?' });
    await telegram.waitForSent(2);
    await started.bot.idle();

    // then the repeated edit ("message is not modified") counts as made: the reply is recorded whole
    expect(hop.lost()).toBe(1);
    expect(telegram.sent.map((sent) => [sent.method, sent.text])).toEqual([
      ['sendMessage', 'Looking it up'],
      ['editMessageText', whole],
    ]);
    const turns = await started.bot.store.get('telegram:1001');
    expect(turns.at(-1)).toMatchObject({ content: whole, delivery: 'sent' });
    expect(started.errors).toEqual([]);
  });

  it('names editMessageText in the error when Telegram refuses the edit of a streamed reply', async () => {
    // given Telegram refusing the next edit
    telegram = await FakeTelegram.start();
    hop = await lossyHop(telegram.apiRoot, () => false);
    await streaming(hop.origin);
    telegram.failNext('editMessageText', {
      error_code: 400,
      description: 'Bad Request: message to edit not found',
    });

    // when the streamed reply's rest is to be shown
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'where is 4711?' });
    await telegram.waitForSent(1);
    await started.bot.idle();

    // then the error says which call Telegram refused
    expect(started.errors.map((error) => error.message)).toEqual([
      'Telegram refused editMessageText: Bad Request: message to edit not found',
    ]);
  });
});
