import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Agent, Bot, ColloquyError } from 'colloquy';
import { PlatformError } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeDiscord, type FakeDiscordUser } from 'colloquy/testing';
import { lossyHop, type LossyHop } from '../../fixtures/lossy-hop.js';
import { ScriptedAgent, streamingAgent } from '../../fixtures/scripted-agent.js';
import { watched } from '../../fixtures/watched-store.js';
import { startDiscordBot } from './discord.fixtures.js';

const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };
const DM = '319674150115610528';
const inDm = `discord:dm:${DM}`;
const PDF = Buffer.from('%PDF-1.7 invoice 4711');

describe('files out and reactions on Discord (discord.js against FakeDiscord, SQLite store)', () => {
  let discord: FakeDiscord;
  let sqlite: SqliteConversationStore;
  let store: ReturnType<typeof watched>;
  let bot: Bot;
  let errors: ColloquyError[];

  async function startBot(agent: Agent): Promise<void> {
    ({ bot, errors } = await startDiscordBot(discord, { agents: [agent], store: store.store }));
  }

  /** Alice writes `text` in her DM; resolves with the turns once the reply is confirmed sent. */
  async function askAndWait(text: string) {
    discord.userMessage({ channelId: DM, author: alice, content: text });
    return store.turns(inDm, (t) => t.some((turn) => turn.delivery === 'sent'));
  }

  beforeEach(async () => {
    discord = await FakeDiscord.start();
    discord.addDmChannel({ id: DM, recipient: alice });
    sqlite = new SqliteConversationStore({ path: ':memory:' });
    store = watched(sqlite);
  });

  afterEach(async () => {
    await bot?.stop();
    await discord.close();
    await sqlite.close();
  });

  it('posts a file as a message attachment (multipart with payload_json), recorded under the reply', async () => {
    const invoice = {
      name: 'invoice-4711.pdf',
      data: PDF,
      mimeType: 'application/pdf',
      caption: 'Invoice 4711',
    };
    await startBot(new ScriptedAgent({ output: 'Here is the invoice.', files: [invoice] }));
    const turns = await askAndWait('invoice for 4711 please');
    const reply = turns.at(-1)!;

    const [upload] = discord.uploads;
    expect(upload).toMatchObject({ name: 'invoice-4711.pdf', description: 'Invoice 4711' });
    expect(upload?.content.equals(PDF)).toBe(true);
    expect(reply).toMatchObject({
      content: 'Here is the invoice.',
      delivery: 'sent',
      attachments: [
        {
          kind: 'file',
          name: 'invoice-4711.pdf',
          mimeType: 'application/pdf',
          size: PDF.length,
          platformFileId: upload!.attachment.id,
          url: upload!.attachment.url,
        },
      ],
    });
    const rows = sqlite.db
      .prepare('SELECT message_id, name, platform_file_id, url FROM message_attachments')
      .all();
    expect(rows).toEqual([
      {
        message_id: reply.id,
        name: 'invoice-4711.pdf',
        platform_file_id: upload!.attachment.id,
        url: upload!.attachment.url,
      },
    ]);
    expect(errors).toEqual([]);
  });

  it('refuses a file over 10 MiB with one error, and still sends and records the text', async () => {
    const huge = { name: 'backup.tar', data: Buffer.alloc(10 * 1024 * 1024 + 1) };
    await startBot(new ScriptedAgent({ output: 'The backup.', files: [huge] }));
    const turns = await askAndWait('backup please');
    await bot.idle();

    expect(discord.uploads).toEqual([]);
    expect(discord.posted.map((m) => m.content)).toEqual(['The backup.']);
    expect(turns.at(-1)).toMatchObject({ content: 'The backup.', delivery: 'sent' });
    expect(turns.at(-1)).not.toHaveProperty('attachments');
    expect(errors.map((e) => e.message)).toEqual([
      "not sent: backup.tar is over Discord's 10 MB limit for a file",
    ]);
    expect(errors[0]).toBeInstanceOf(PlatformError);
  });

  /** The message the fake created to carry a file the bot posted. */
  function fileMessageId(): string {
    return discord.posted.find((message) => message.attachments?.length)!.id;
  }

  it('names the message that carries a file posted alone, and records a reaction on it on the post', async () => {
    const invoice = { name: 'invoice-4711.pdf', data: PDF, mimeType: 'application/pdf' };
    await startBot(new ScriptedAgent({ output: 'unused' }));

    const receipt = await bot.send(inDm, { content: '', files: [invoice] });
    const carrier = fileMessageId();
    discord.react({ messageId: carrier, user: alice, emoji: { id: null, name: '👍' } });

    expect(receipt).toMatchObject({ status: 'sent', messageIds: [carrier] });
    const post = await sqlite.getMessage(inDm, receipt.id);
    expect(post?.metadata.messageId).toBe(carrier);
    await expect
      .poll(() => sqlite.getReactions(inDm, receipt.id))
      .toMatchObject([{ participantId: `discord:${alice.id}`, reaction: '👍' }]);
  });

  it("joins the message carrying a streamed reply's file to the reply's parts, and records a reaction on it on the reply", async () => {
    const invoice = { name: 'invoice-4711.pdf', data: PDF, mimeType: 'application/pdf' };
    await startBot(streamingAgent({ output: 'Here is the invoice.', files: [invoice] }));

    const turns = await askAndWait('invoice for 4711 please');
    const reply = turns.at(-1)!;
    const carrier = fileMessageId();
    discord.react({ messageId: carrier, user: alice, emoji: { id: null, name: '👀' } });

    expect(reply.metadata.partMessageIds).toEqual([carrier]);
    await expect
      .poll(() => sqlite.getReactions(inDm, reply.id))
      .toMatchObject([{ participantId: `discord:${alice.id}`, reaction: '👀' }]);
  });

  it('reacts to the turn it answers and records the reaction with the bot as participant', async () => {
    await startBot(new ScriptedAgent({ output: 'Looking.' }, (ctx) => ctx.react!('👀')));
    const turns = await askAndWait('is 4711 shipped?');
    const asked = turns[0]!;

    expect(discord.botReactions).toEqual([
      { channelId: DM, messageId: asked.metadata.messageId, emoji: '👀' },
    ]);
    expect(await sqlite.getReactions(inDm, asked.id)).toMatchObject([
      { participantId: `discord:${discord.botUser.id}`, reaction: '👀' },
    ]);
  });
});

describe('Discord: a file post whose answer is lost while the bot runs', () => {
  let discord: FakeDiscord;
  let hop: LossyHop;
  let bot: Bot;

  afterEach(async () => {
    await bot.stop();
    await hop.close();
    await discord.close();
  });

  it('is posted once: discord.js sends it again with its nonce, and Discord answers the first', async () => {
    // given a hop that resets the connection after Discord took the first file post
    discord = await FakeDiscord.start();
    discord.addDmChannel({ id: DM, recipient: alice });
    hop = await lossyHop(new URL(discord.restApi).origin, (req) =>
      String(req.headers['content-type']).startsWith('multipart/form-data'),
    );
    const invoice = { name: 'invoice-4711.pdf', data: PDF, mimeType: 'application/pdf' };
    const agent = new ScriptedAgent({ output: 'Here is the invoice.', files: [invoice] });
    const store = watched(new SqliteConversationStore({ path: ':memory:' }));
    ({ bot } = await startDiscordBot(
      discord,
      { agents: [agent], store: store.store },
      { clientOptions: { rest: { api: `${hop.origin}/api` } } },
    ));

    // when Alice asks and the bot answers with the file
    discord.userMessage({ channelId: DM, author: alice, content: 'invoice for 4711 please' });
    const turns = await store.turns(inDm, (t) => t.some((turn) => turn.delivery === 'sent'));

    // then the file is on Discord once, and recorded under the reply
    expect(hop.lost()).toBe(1);
    expect(discord.uploads).toHaveLength(1);
    expect(discord.posted).toHaveLength(2);
    expect(turns.at(-1)?.attachments).toMatchObject([{ name: 'invoice-4711.pdf' }]);
  });
});
