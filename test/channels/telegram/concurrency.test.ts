import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';
import type { Chat, User } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BaseAgent, Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import type { ColloquyError } from 'colloquy';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';
import { answer } from '../../fixtures/model-answer.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const grace: User = { id: 1002, is_bot: false, first_name: 'Grace' };
const adaDm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };
const graceDm: Chat = { id: 1002, type: 'private', first_name: 'Grace' };

/** A promise with its resolve function, to hold a model call until the test lets it go. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** The text of the last message in the prompt: the turn being answered. */
function lastTurn(options: LanguageModelV3CallOptions): string {
  return JSON.stringify(options.prompt.at(-1)?.content ?? '');
}

/**
 * Answers `re: <word>` for the words `slow`, `first`, `second`, `quick`. A turn containing
 * `slow` or `first` signals `started` and waits for `release` before answering.
 */
class EchoAgent extends BaseAgent {
  name = 'echo-agent';
  description = 'Echoes the turn it answers';
  instructions = 'Echo.';
  readonly started = gate();
  readonly release = gate();
  override model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      const text = lastTurn(options);
      const word = ['slow', 'first', 'second', 'quick'].find((w) => text.includes(w)) ?? '?';
      if (word === 'slow' || word === 'first') {
        this.started.open();
        await this.release.opened;
      }
      return answer(`re: ${word}`);
    },
  });
}

let telegram: FakeTelegram;
let agent: EchoAgent;
let bot: Bot;
let errors: ColloquyError[];

beforeEach(async () => {
  telegram = await FakeTelegram.start();
  agent = new EchoAgent();
  errors = [];
  const channel = new TelegramChannel({
    token: telegram.token,
    client: { apiRoot: telegram.apiRoot },
    pollingTimeoutSeconds: 5,
    retry: { baseDelayMs: 5 },
  });
  bot = new Bot({
    channels: [channel],
    agents: [agent],
    store: new InMemoryConversationStore(),
    logger: silentLogger,
  });
  bot.catch((error) => void errors.push(error));
  await bot.start();
});

afterEach(async () => {
  agent.release.open();
  await bot.stop();
  await telegram.close();
});

const repliesIn = (chatId: number) =>
  telegram.sent.filter((sent) => sent.chatId === chatId).map((sent) => sent.text);

describe('TelegramChannel with long polling and a slow model', () => {
  it("answers another chat while one chat's answer is still pending", async () => {
    // given Ada's question is stuck in the model
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'a slow question' });
    await agent.started.opened;

    // when Grace writes in her own chat
    telegram.sendUserMessage({ chat: graceDm, from: grace, text: 'a quick question' });

    // then Grace is answered while Ada still waits
    await telegram.waitForSent((sent) => sent.chatId === graceDm.id, 3000);
    expect(repliesIn(graceDm.id)).toEqual(['re: quick']);
    expect(repliesIn(adaDm.id)).toEqual([]);

    // and Ada is answered once the model returns
    agent.release.open();
    await telegram.waitForSent((sent) => sent.chatId === adaDm.id);
    expect(repliesIn(adaDm.id)).toEqual(['re: slow']);
    expect(errors).toEqual([]);
  });

  it('answers the turns of one chat in the order they arrived', async () => {
    // given Ada's first question is stuck in the model
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'the first question' });
    await agent.started.opened;

    // when she asks a second one, and Grace (whose update comes after it) is answered
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'the second question' });
    telegram.sendUserMessage({ chat: graceDm, from: grace, text: 'a quick question' });
    await telegram.waitForSent((sent) => sent.chatId === graceDm.id, 3000);
    expect(repliesIn(adaDm.id)).toEqual([]); // the second waited behind the first

    // then, once the first is answered, both are answered in order
    agent.release.open();
    await telegram.waitForSent(() => repliesIn(adaDm.id).length === 2);
    expect(repliesIn(adaDm.id)).toEqual(['re: first', 're: second']);
    expect(errors).toEqual([]);
  });

  it('waits for the turns in flight on stop', async () => {
    // given a turn stuck in the model
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'a slow question' });
    await agent.started.opened;

    // when the bot stops and the model then returns
    const stopped = bot.stop();
    agent.release.open();
    await stopped;

    // then the turn was answered before stop resolved
    expect(repliesIn(adaDm.id)).toEqual(['re: slow']);
  });
});
