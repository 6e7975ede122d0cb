import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot, ColloquyError } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeSlack } from 'colloquy/testing';
import { watched } from '../../fixtures/watched-store.js';
import { startSlackBot } from './slack.fixtures.js';

const inGeneral = 'slack:T0FAKE:C0GENERAL';

describe('files people share on Slack (Bolt against FakeSlack, SQLite store)', () => {
  let slack: FakeSlack;
  let sqlite: SqliteConversationStore;
  let store: ReturnType<typeof watched>;
  let bot: Bot;
  let errors: ColloquyError[];

  beforeEach(async () => {
    slack = await FakeSlack.start();
    slack.addUser('U0ALICE', 'alice');
    sqlite = new SqliteConversationStore({ path: ':memory:' });
    store = watched(sqlite);
    ({ bot, errors } = await startSlackBot(slack, { store: store.store }));
  });

  afterEach(async () => {
    await bot.stop();
    await slack.close();
    await sqlite.close();
  });

  it('keeps a photo with its caption, a document and a voice clip of a file_share message', async () => {
    const { event } = await slack.fileShare({
      channel: 'C0GENERAL',
      user: 'U0ALICE',
      text: 'the box arrived like this',
      files: [
        { name: 'box.jpg', mimeType: 'image/jpeg', content: 'jpeg bytes' },
        { name: 'invoice 88.pdf', mimeType: 'application/pdf', size: 245760 },
        { name: 'audio_message.webm', mimeType: 'audio/webm', clip: 'audio' },
      ],
    });
    const [turn] = await store.turns(inGeneral, (t) => t.length === 1);
    const files = event.files as { id: string; url_private: string }[];
    expect(turn).toMatchObject({
      content: 'the box arrived like this',
      attachments: [
        {
          kind: 'image',
          name: 'box.jpg',
          mimeType: 'image/jpeg',
          size: 10,
          platformFileId: files[0]?.id,
          url: files[0]?.url_private,
        },
        { kind: 'file', name: 'invoice 88.pdf', mimeType: 'application/pdf', size: 245760 },
        { kind: 'voice', name: 'audio_message.webm', mimeType: 'audio/webm' },
      ],
    });
    expect(errors).toEqual([]);
  });

  it('records a huge file, an unknown MIME type and a file Slack hides without a crash', async () => {
    await slack.fileShare({
      channel: 'C0GENERAL',
      user: 'U0ALICE',
      text: '',
      files: [{ name: 'disk.img', mimeType: 'application/x-made-up', size: 2 ** 40 }],
    });
    await slack.message({
      channel: 'C0GENERAL',
      user: 'U0ALICE',
      text: '',
      subtype: 'file_share',
      files: [{ id: 'F0HIDDEN', mode: 'hidden_by_limit' }, 'not a file'],
    });
    const turns = await store.turns(inGeneral, (t) => t.length === 2);
    expect(turns.map((t) => t.attachments)).toEqual([
      [
        {
          kind: 'file',
          name: 'disk.img',
          mimeType: 'application/x-made-up',
          size: 2 ** 40,
          platformFileId: expect.any(String),
          url: expect.any(String),
        },
      ],
      [{ kind: 'file', platformFileId: 'F0HIDDEN' }],
    ]);
    expect(errors).toEqual([]);
  });
});
