import type { Chat, User } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot, ColloquyError } from 'colloquy';
import { FakeTelegram } from 'colloquy/testing';
import { FileReadingAgent, filesIn, PNG, userTextIn } from '../../fixtures/file-reading-agent.js';
import { startTelegramBot } from './telegram.fixtures.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const bob: User = { id: 1002, is_bot: false, first_name: 'Bob' };
const adaChat: Chat = { id: 1001, type: 'private', first_name: 'Ada' };
const bobChat: Chat = { id: 1002, type: 'private', first_name: 'Bob' };
const group: Chat = { id: -1001234567890, type: 'supergroup', title: 'Orders Team' };

describe('an agent reads the files people send on Telegram (grammy against FakeTelegram, memory store)', () => {
  let telegram: FakeTelegram;
  let agent: FileReadingAgent;
  let bot: Bot;
  let errors: ColloquyError[];

  beforeEach(async () => {
    telegram = await FakeTelegram.start();
    agent = new FileReadingAgent();
    const retry = { baseDelayMs: 5 };
    ({ bot, errors } = await startTelegramBot(telegram, { agents: [agent] }, { retry }));
  });

  afterEach(async () => {
    await bot.stop();
    await telegram.close();
  });

  it('gives the model a photo’s bytes by getFile, and a text document’s text', async () => {
    telegram.sendUserMessage({
      chat: adaChat,
      from: ada,
      text: 'the list',
      file: { kind: 'document', name: 'list.csv', mimeType: 'text/csv', content: 'sku,qty\nA1,2' },
    });
    await telegram.waitForSent(1);
    telegram.sendUserMessage({
      chat: adaChat,
      from: ada,
      text: 'what is this?',
      file: { kind: 'photo', content: PNG },
    });
    const [, reply] = await telegram.waitForSent(2);
    expect(reply?.text).toBe('Seen.');
    const prompt = agent.lastPrompt();
    // The photo is a PNG whatever Telegram's default type says: the bytes decide.
    expect(filesIn(prompt)).toEqual([{ mediaType: 'image/png', bytes: PNG }]);
    expect(userTextIn(prompt)).toContain(`Ada: what is this? [image: ${PNG.length} bytes]`);
    expect(userTextIn(prompt)).toContain('[file: list.csv, 12 bytes]\n```\nsku,qty\nA1,2\n```');
    // Bytes are kept for one run only: the second run fetches the list again, then the photo.
    expect(telegram.calls.filter((call) => call.method === 'getFile')).toHaveLength(3);
    expect(errors).toEqual([]);
  });

  it('answers with placeholders for a file over the cap, an unknown type and one Telegram refuses', async () => {
    const sent = [
      { kind: 'photo', size: 5_000_000 },
      { kind: 'document', name: 'model.xyz', mimeType: 'application/x-made-up', content: 'xyz' },
      {
        kind: 'document',
        name: 'gone.txt',
        mimeType: 'text/plain',
        content: 'gone',
        refused: true,
      },
    ] as const;
    for (const [i, file] of sent.entries()) {
      telegram.sendUserMessage({ chat: adaChat, from: ada, text: `file ${i}`, file });
      await telegram.waitForSent(i + 1);
    }
    const prompt = agent.lastPrompt();
    expect(filesIn(prompt)).toEqual([]);
    const text = userTextIn(prompt);
    expect(text).toContain('file 0 [image: 4.8 MB]');
    expect(text).toContain('file 1 [file: model.xyz, 3 bytes]');
    expect(text).toContain('file 2 [file: gone.txt, 4 bytes]');
    expect(telegram.calls.filter((call) => call.method === 'getFile')).toHaveLength(1);
    expect(agent.warnings).toEqual([expect.stringMatching(/gone\.txt.*HTTP 404/)]);
    expect(telegram.sent.map((message) => message.text)).toEqual(['Seen.', 'Seen.', 'Seen.']);
  });

  it('never shows another chat’s files, nor those of group messages not addressed to it', async () => {
    telegram.sendUserMessage({
      chat: bobChat,
      from: bob,
      text: 'my receipt',
      file: { kind: 'photo', content: PNG },
    });
    await telegram.waitForSent(1);
    telegram.sendUserMessage({
      chat: group,
      from: ada,
      text: 'for the team',
      file: { kind: 'photo', content: PNG },
    });
    telegram.sendUserMessage({
      chat: group,
      from: ada,
      text: `@${telegram.botInfo.username} what did people share?`,
    });
    await telegram.waitForSent(2);
    const prompt = agent.lastPrompt();
    expect(userTextIn(prompt)).toContain('what did people share?');
    expect(filesIn(prompt)).toEqual([]);
    expect(JSON.stringify(prompt)).not.toMatch(/my receipt|for the team/);
  });
});
