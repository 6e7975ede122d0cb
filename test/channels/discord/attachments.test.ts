import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot, ColloquyError } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeDiscord, type FakeDiscordUser } from 'colloquy/testing';
import { watched } from '../../fixtures/watched-store.js';
import { addGeneral, GENERAL, GUILD, startDiscordBot } from './discord.fixtures.js';

const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };
const inGeneral = `discord:${GUILD}:${GENERAL}`;

describe('files people post on Discord (discord.js against FakeDiscord, SQLite store)', () => {
  let discord: FakeDiscord;
  let sqlite: SqliteConversationStore;
  let db: ReturnType<typeof watched>;
  let bot: Bot;
  let errors: ColloquyError[];

  beforeEach(async () => {
    discord = await FakeDiscord.start();
    addGeneral(discord);
    sqlite = new SqliteConversationStore({ path: ':memory:' });
    db = watched(sqlite);
    ({ bot, errors } = await startDiscordBot(discord, { store: db.store }));
  });

  afterEach(async () => {
    await bot.stop();
    await discord.close();
    await sqlite.close();
  });

  it('keeps a photo with its caption and a document, with their CDN URLs', async () => {
    const message = discord.userMessage({
      channelId: GENERAL,
      author: alice,
      content: 'the box arrived like this',
      files: [
        { name: 'box.jpg', mimeType: 'image/jpeg', content: 'jpeg bytes' },
        { name: 'invoice 88.pdf', mimeType: 'application/pdf', size: 245760 },
      ],
    });
    const [turn] = await db.turns(inGeneral, (t) => t.length === 1);
    const [photo, pdf] = message.attachments as { id: string; url: string }[];
    expect(turn).toMatchObject({
      content: 'the box arrived like this',
      attachments: [
        {
          kind: 'image',
          name: 'box.jpg',
          mimeType: 'image/jpeg',
          size: 10,
          platformFileId: photo?.id,
          url: photo?.url,
        },
        {
          kind: 'file',
          name: 'invoice 88.pdf',
          mimeType: 'application/pdf',
          size: 245760,
          platformFileId: pdf?.id,
        },
      ],
    });
    expect(errors).toEqual([]);
  });

  it('keeps a voice message and a sticker', async () => {
    discord.userMessage({
      channelId: GENERAL,
      author: alice,
      content: '',
      files: [{ mimeType: 'audio/ogg', voice: true, content: 'OggS…' }],
    });
    discord.userMessage({
      channelId: GENERAL,
      author: alice,
      content: '',
      stickers: [{ id: '749054660769218631', name: 'Wave', format_type: 1 }],
    });
    const turns = await db.turns(inGeneral, (t) => t.length === 2);
    expect(turns.map((t) => t.attachments)).toMatchObject([
      [{ kind: 'voice', name: 'voice-message.ogg', mimeType: 'audio/ogg', size: 7 }],
      [
        {
          kind: 'sticker',
          name: 'Wave',
          mimeType: 'image/png',
          platformFileId: '749054660769218631',
          url: 'https://media.discordapp.net/stickers/749054660769218631.png',
        },
      ],
    ]);
    expect(errors).toEqual([]);
  });

  it('records a huge file with an unknown MIME type without a crash', async () => {
    discord.userMessage({
      channelId: GENERAL,
      author: alice,
      content: 'backup',
      files: [{ name: 'disk.img', mimeType: 'application/x-made-up', size: 2 ** 40 }],
    });
    const [turn] = await db.turns(inGeneral, (t) => t.length === 1);
    expect(turn?.attachments).toMatchObject([
      { kind: 'file', name: 'disk.img', mimeType: 'application/x-made-up', size: 2 ** 40 },
    ]);
    expect(errors).toEqual([]);
  });
});
