import type { Chat, User } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot, ColloquyError } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeTelegram } from 'colloquy/testing';
import { watched } from '../../fixtures/watched-store.js';
import { startTelegramBot } from './telegram.fixtures.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const group: Chat = { id: -1001234567890, type: 'supergroup', title: 'Orders Team' };
const inGroup = 'telegram:-1001234567890';

describe('files people send on Telegram (grammy against FakeTelegram, SQLite store)', () => {
  let telegram: FakeTelegram;
  let sqlite: SqliteConversationStore;
  let store: ReturnType<typeof watched>;
  let bot: Bot;
  let errors: ColloquyError[];

  beforeEach(async () => {
    telegram = await FakeTelegram.start();
    sqlite = new SqliteConversationStore({ path: ':memory:' });
    store = watched(sqlite);
    const retry = { baseDelayMs: 5 };
    ({ bot, errors } = await startTelegramBot(telegram, { store: store.store }, { retry }));
  });

  afterEach(async () => {
    await bot.stop();
    await telegram.close();
    await sqlite.close();
  });

  it('keeps a photo with its caption as the turn’s content, and its largest size', async () => {
    const { message } = telegram.sendUserMessage({
      chat: group,
      from: ada,
      text: 'the box arrived like this',
      file: { kind: 'photo', content: 'jpeg bytes' },
    });
    const [turn] = await store.turns(inGroup, (t) => t.length === 1);
    expect(turn).toMatchObject({
      content: 'the box arrived like this',
      attachments: [
        {
          kind: 'image',
          mimeType: 'image/jpeg',
          size: 10,
          platformFileId: message.photo?.at(-1)?.file_id,
        },
      ],
    });
    expect(turn?.attachments?.[0]).not.toHaveProperty('url');
    expect(errors).toEqual([]);
  });

  it('keeps a document with its name, MIME type and size, and a voice note without caption', async () => {
    telegram.sendUserMessage({
      chat: group,
      from: ada,
      text: '',
      file: { kind: 'document', name: 'invoice 88.pdf', mimeType: 'application/pdf', size: 245760 },
    });
    const { message } = telegram.sendUserMessage({
      chat: group,
      from: ada,
      text: '',
      file: { kind: 'voice', content: 'OggS…' },
    });
    const turns = await store.turns(inGroup, (t) => t.length === 2);
    expect(turns.map((t) => [t.content, t.attachments])).toEqual([
      [
        '',
        [
          {
            kind: 'file',
            name: 'invoice 88.pdf',
            mimeType: 'application/pdf',
            size: 245760,
            platformFileId: expect.any(String),
          },
        ],
      ],
      [
        '',
        [{ kind: 'voice', mimeType: 'audio/ogg', size: 7, platformFileId: message.voice?.file_id }],
      ],
    ]);
    expect(errors).toEqual([]);
  });

  it('records a huge file, an unknown MIME type, a sticker and a GIF without a crash', async () => {
    const files = [
      { kind: 'document', name: 'disk.img', mimeType: 'application/x-made-up', size: 2 ** 40 },
      { kind: 'sticker', name: '👍' },
      { kind: 'animation', name: 'party.mp4' },
    ] as const;
    for (const file of files) telegram.sendUserMessage({ chat: group, from: ada, text: '', file });
    const turns = await store.turns(inGroup, (t) => t.length === 3);
    expect(turns.map((t) => t.attachments?.[0])).toMatchObject([
      { kind: 'file', name: 'disk.img', mimeType: 'application/x-made-up', size: 2 ** 40 },
      { kind: 'sticker', name: '👍', mimeType: 'image/webp' },
      { kind: 'animation', name: 'party.mp4', mimeType: 'video/mp4' },
    ]);
    expect(turns.every((t) => t.attachments?.length === 1)).toBe(true);
    expect(errors).toEqual([]);
  });
});
