import { afterEach, describe, expect, it } from 'vitest';
import { Bot, InMemoryConversationStore, NetworkError, silentLogger } from 'colloquy';
import type { ConversationStore, OutboundMessage, SendOptions, SentMessage } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { MemoryChannel } from 'colloquy/testing';
import { ScriptedAgent } from '../../fixtures/scripted-agent.js';
import { deferred } from './bot.fixtures.js';

const PDF = Buffer.from('%PDF-1.7 invoice 4711');
const invoice = { name: 'invoice-4711.pdf', data: PDF, mimeType: 'application/pdf' };
/** The file as the record names it before the platform has it: no platform id, no URL. */
const SENDING = { kind: 'file', name: 'invoice-4711.pdf', mimeType: 'application/pdf', size: 21 };

/** A channel whose `send` waits until the test lets it answer (an upload that hangs). */
class HeldChannel extends MemoryChannel {
  readonly arrived = deferred();
  readonly answer = deferred();

  override async send(message: OutboundMessage, options?: SendOptions): Promise<SentMessage> {
    this.arrived.resolve();
    await this.answer.promise;
    const sent = await super.send(message, options);
    return { ...sent, files: [{ ...SENDING, platformFileId: 'F0INVOICE' }] };
  }
}

const stores: [string, () => ConversationStore & { close?(): Promise<void> }][] = [
  ['memory', () => new InMemoryConversationStore()],
  ['SQLite', () => new SqliteConversationStore({ path: ':memory:' })],
];

describe.each(stores)('files out through the outbox (%s store)', (_, makeStore) => {
  let bot: Bot | undefined;
  let store: ReturnType<typeof makeStore>;

  afterEach(async () => {
    await bot?.stop();
    await store.close?.();
  });

  function start(channel: MemoryChannel): Bot {
    store = makeStore();
    const agent = new ScriptedAgent({ output: 'Here is the invoice.', files: [invoice] });
    bot = new Bot({ channels: [channel], agents: [agent], store, logger: silentLogger });
    bot.catch(() => undefined);
    return bot;
  }

  it('names the files a reply is sending in its record before the first upload', async () => {
    // given a channel whose send hangs
    const channel = new HeldChannel({ scope: 'dm' });
    await start(channel).start();

    // when the agent answers with a file, and the platform has not answered yet
    const { handled } = await channel.deliver('invoice for 4711 please');
    await channel.arrived.promise;
    const [, sending] = await store.get(channel.conversationId);
    channel.answer.resolve();
    await handled;
    const [, sent] = await store.get(channel.conversationId);

    // then the record was `sending` and named the file, without the platform's id
    expect(sending).toMatchObject({ delivery: 'sending', attachments: [SENDING] });
    expect(sending?.attachments?.[0]).not.toHaveProperty('platformFileId');
    // and once the platform answered, it holds the file as the platform answered
    expect(sent).toMatchObject({
      delivery: 'sent',
      attachments: [{ ...SENDING, platformFileId: 'F0INVOICE' }],
    });
  });

  it('keeps the files of a reply whose send got no answer, marked unconfirmed', async () => {
    // given a channel whose network fails while the reply goes out
    const channel = new MemoryChannel({ scope: 'dm' });
    channel.sendError = new NetworkError('Could not reach the platform: ECONNRESET');
    await start(channel).start();

    // when the agent answers with a file
    await channel.receive('invoice for 4711 please');
    await bot!.idle();

    // then the record says which files the reply was sending, not confirmed
    const [, reply] = await store.get(channel.conversationId);
    expect(reply).toMatchObject({ delivery: 'unconfirmed', attachments: [SENDING] });
  });

  it('records no files for a reply whose files the platform all refused', async () => {
    // given a channel that posts the text and answers no files (it refused them)
    const channel = new MemoryChannel({ scope: 'dm' });
    await start(channel).start();

    // when the agent answers with a file
    await channel.receive('invoice for 4711 please');
    await bot!.idle();

    // then the record is sent, with no files
    const [, reply] = await store.get(channel.conversationId);
    expect(reply).toMatchObject({ delivery: 'sent', content: 'Here is the invoice.' });
    expect(reply).not.toHaveProperty('attachments');
  });
});
