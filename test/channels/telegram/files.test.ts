import type { LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { jsonSchema, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import type { Chat, User } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BaseAgent, PlatformError, replyFile } from 'colloquy';
import type { Bot } from 'colloquy';
import type { Agent, ColloquyError } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeTelegram } from 'colloquy/testing';
import { answer } from '../../fixtures/model-answer.js';
import { ScriptedAgent, streamingAgent } from '../../fixtures/scripted-agent.js';
import { watched } from '../../fixtures/watched-store.js';
import { FlakyReactions } from '../../src/bot/bot.fixtures.js';
import { startTelegramBot } from './telegram.fixtures.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const adaDm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };
const inDm = 'telegram:1001';
const PDF = Buffer.from('%PDF-1.7 invoice 4711');
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

const invoiceTool = tool({
  description: 'renders the invoice of an order as a PDF',
  inputSchema: jsonSchema<{ order: string }>({
    type: 'object',
    properties: { order: { type: 'string' } },
  }),
  execute: async ({ order }) => ({
    order,
    files: [replyFile({ name: `invoice-${order}.pdf`, data: PDF, mimeType: 'application/pdf' })],
  }),
});

const invoiceCall: LanguageModelV3GenerateResult = {
  ...answer(''),
  content: [
    { type: 'tool-call', toolCallId: 'c1', toolName: 'invoice', input: '{"order":"4711"}' },
  ],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
};

class InvoiceAgent extends BaseAgent {
  name = 'invoice-agent';
  description = 'Sends invoices';
  instructions = 'Send the invoice asked for.';
  override tools = { invoice: invoiceTool };
  override model = new MockLanguageModelV3({
    doGenerate: async () => this.steps.shift() ?? answer('(done)'),
  });
  private readonly steps = [invoiceCall, answer('Here is the invoice for order 4711.')];
}

describe('files out and reactions on Telegram (grammy against FakeTelegram, SQLite store)', () => {
  let telegram: FakeTelegram;
  let sqlite: SqliteConversationStore;
  let store: ReturnType<typeof watched>;
  let bot: Bot;
  let errors: ColloquyError[];

  async function startBot(agent: Agent): Promise<void> {
    const retry = { baseDelayMs: 5 };
    ({ bot, errors } = await startTelegramBot(
      telegram,
      { agents: [agent], store: store.store },
      { retry },
    ));
  }

  /** Ada writes `text`; resolves with the turns once the reply is confirmed sent. */
  async function askAndWait(text: string) {
    telegram.sendUserMessage({ chat: adaDm, from: ada, text });
    return store.turns(inDm, (t) => t.some((turn) => turn.delivery === 'sent'));
  }

  beforeEach(async () => {
    telegram = await FakeTelegram.start();
    sqlite = new SqliteConversationStore({ path: ':memory:' });
    store = watched(sqlite);
  });

  afterEach(async () => {
    await bot?.stop();
    await telegram.close();
    await sqlite.close();
  });

  it('sends the PDF a tool made as a document, and records it under the reply', async () => {
    await startBot(new InvoiceAgent());
    const turns = await askAndWait('invoice for 4711 please');
    const reply = turns.find(
      (turn) => turn.participant.id === 'invoice-agent' && !turn.metadata.toolRole,
    );

    const [upload] = telegram.uploads;
    expect(upload).toMatchObject({ method: 'sendDocument', name: 'invoice-4711.pdf' });
    expect(upload?.bytes.equals(PDF)).toBe(true);
    const document = upload!.message.document!;
    expect(reply).toMatchObject({
      content: 'Here is the invoice for order 4711.',
      delivery: 'sent',
      attachments: [
        {
          kind: 'file',
          name: 'invoice-4711.pdf',
          mimeType: 'application/pdf',
          size: PDF.length,
          platformFileId: document.file_id,
        },
      ],
    });
    const rows = sqlite.db
      .prepare(
        'SELECT message_id, kind, name, mime_type, size, platform_file_id FROM message_attachments',
      )
      .all();
    expect(rows).toEqual([
      {
        message_id: reply!.id,
        kind: 'file',
        name: 'invoice-4711.pdf',
        mime_type: 'application/pdf',
        size: PDF.length,
        platform_file_id: document.file_id,
      },
    ]);
    // The model and the recorded tool result see the file's name, never its bytes.
    const result = turns.find((turn) => turn.metadata.toolRole === 'result');
    expect(result?.content).toContain('"name":"invoice-4711.pdf"');
    expect(result?.content).not.toContain('PDF-1.7');
    expect(errors).toEqual([]);
  });

  it('sends a PNG as a photo and a CSV as a document, each with its caption', async () => {
    await startBot(
      new ScriptedAgent({
        output: 'The chart and its data.',
        files: [
          { name: 'chart.png', data: PNG, mimeType: 'image/png', caption: 'orders per day' },
          { name: 'orders.csv', data: Buffer.from('day,orders\n1,3\n'), mimeType: 'text/csv' },
        ],
      }),
    );
    const turns = await askAndWait('chart please');
    expect(telegram.uploads.map((u) => [u.method, u.name, u.caption])).toEqual([
      ['sendPhoto', 'chart.png', 'orders per day'],
      ['sendDocument', 'orders.csv', undefined],
    ]);
    const photo = telegram.uploads[0]!.message.photo!.at(-1)!;
    expect(turns.at(-1)?.attachments).toEqual([
      {
        kind: 'image',
        name: 'chart.png',
        mimeType: 'image/png',
        size: photo.file_size,
        platformFileId: photo.file_id,
      },
      expect.objectContaining({ kind: 'file', name: 'orders.csv', mimeType: 'text/csv' }),
    ]);
    expect(telegram.sent.map((s) => s.text)).toEqual(['The chart and its data.']);
  });

  it('refuses a file over the 50 MB upload limit with one error, and still sends and records the text', async () => {
    const huge = Buffer.alloc(50 * 1024 * 1024 + 1);
    await startBot(
      new ScriptedAgent({ output: 'The backup.', files: [{ name: 'backup.tar', data: huge }] }),
    );
    const turns = await askAndWait('backup please');
    await bot.idle();

    expect(telegram.uploads).toEqual([]);
    expect(telegram.sent.map((s) => s.text)).toEqual(['The backup.']);
    expect(turns.at(-1)).toMatchObject({ content: 'The backup.', delivery: 'sent' });
    expect(turns.at(-1)).not.toHaveProperty('attachments');
    expect(errors.map((e) => e.message)).toEqual([
      "not sent: backup.tar is over Telegram's 50 MB limit for a file",
    ]);
    expect(errors[0]).toBeInstanceOf(PlatformError);
    expect(errors[0]).toMatchObject({ code: 'file_too_large', transient: false });
  });

  it('names the message that carries a file posted alone, and records a reaction on it on the post', async () => {
    const invoice = { name: 'invoice-4711.pdf', data: PDF, mimeType: 'application/pdf' };
    await startBot(new ScriptedAgent({ output: 'unused' }));

    const receipt = await bot.send(inDm, { content: '', files: [invoice] });
    const carrier = telegram.uploads[0]!.message.message_id;
    expect(telegram.react({ chat: adaDm, from: ada, messageId: carrier, emoji: ['👍'] })).toBe(
      true,
    );

    expect(receipt).toMatchObject({ status: 'sent', messageIds: [String(carrier)] });
    const post = await sqlite.getMessage(inDm, receipt.id);
    expect(post?.metadata.messageId).toBe(String(carrier));
    await expect
      .poll(() => sqlite.getReactions(inDm, receipt.id))
      .toMatchObject([{ participantId: 'telegram:1001', reaction: '👍' }]);
  });

  it("joins the messages carrying a streamed reply's files to the reply's parts, and records a reaction on one on the reply", async () => {
    const chart = { name: 'chart.png', data: PNG, mimeType: 'image/png' };
    const invoice = { name: 'invoice-4711.pdf', data: PDF, mimeType: 'application/pdf' };
    await startBot(
      streamingAgent({ output: 'Here are the chart and the invoice.', files: [chart, invoice] }),
    );

    const turns = await askAndWait('chart and invoice please');
    const reply = turns.at(-1)!;
    const carriers = telegram.uploads.map((upload) => upload.message.message_id);
    telegram.react({ chat: adaDm, from: ada, messageId: carriers[1]!, emoji: ['👀'] });

    expect(reply.metadata.partMessageIds).toEqual(carriers.map(String));
    await expect
      .poll(() => sqlite.getReactions(inDm, reply.id))
      .toMatchObject([{ participantId: 'telegram:1001', reaction: '👀' }]);
  });

  it('reacts to the turn it answers and records the reaction with the bot as participant', async () => {
    await startBot(new ScriptedAgent({ output: 'Looking.' }, (ctx) => ctx.react!('👀')));
    const turns = await askAndWait('is 4711 shipped?');
    const asked = turns[0]!;

    expect(telegram.botReactions).toEqual([
      { chatId: adaDm.id, messageId: Number(asked.metadata.messageId), emoji: ['👀'] },
    ]);
    expect(await sqlite.getReactions(inDm, asked.id)).toMatchObject([
      { participantId: 'telegram:123456789', reaction: '👀' },
    ]);
  });

  it('reacts from bot code to a stored turn, and refuses an unknown one in one line', async () => {
    await startBot(new ScriptedAgent({ output: 'Noted.' }));
    const turns = await askAndWait('thanks');
    await bot.react(inDm, turns[0]!.id, '👍');
    expect(telegram.botReactions).toMatchObject([{ emoji: ['👍'] }]);
    expect(await sqlite.getReactions(inDm, turns[0]!.id)).toMatchObject([
      { participantId: 'telegram:123456789', reaction: '👍' },
    ]);

    await expect(bot.react(inDm, 'telegram:1001:999', '👍')).rejects.toThrow(
      'cannot react: no message telegram:1001:999 in telegram:1001',
    );
    expect(telegram.botReactions).toHaveLength(1);
  });

  it('records ctx.react once and shows it once when the store fails its first write of it', async () => {
    // given an agent that reacts before it answers, and a store that fails the next reaction
    const flaky = new FlakyReactions();
    flaky.failing = 1;
    store = watched(flaky);
    await startBot(new ScriptedAgent({ output: 'Looking.' }, (ctx) => ctx.react!('👀')));

    // when Ada asks
    const [asked] = await askAndWait('is 4711 shipped?');
    await bot.idle();

    // then Telegram shows the reaction once, and capture recorded it once the store was back
    expect(telegram.botReactions).toEqual([
      { chatId: adaDm.id, messageId: Number(asked!.metadata.messageId), emoji: ['👀'] },
    ]);
    const recorded = await flaky.getReactions(inDm, asked!.id);
    expect(recorded).toHaveLength(1);
    expect(recorded).toMatchObject([{ participantId: 'telegram:123456789', reaction: '👀' }]);
    expect(flaky.failing).toBe(0);
    expect(errors).toMatchObject([{ name: 'StoreError', transient: true }]); // the blip, once
  });

  it('resolves bot.react once its reaction is recorded, through a passing store failure', async () => {
    // given a stored turn, and a store that fails the next reaction
    const flaky = new FlakyReactions();
    store = watched(flaky);
    await startBot(new ScriptedAgent({ output: 'Noted.' }));
    const [asked] = await askAndWait('thanks');
    flaky.failing = 1;

    // when bot code reacts to it
    await bot.react(inDm, asked!.id, '👍');

    // then it is shown once and recorded once
    expect(telegram.botReactions).toMatchObject([{ emoji: ['👍'] }]);
    const recorded = await flaky.getReactions(inDm, asked!.id);
    expect(recorded).toHaveLength(1);
    expect(recorded).toMatchObject([{ participantId: 'telegram:123456789', reaction: '👍' }]);
    expect(flaky.failing).toBe(0);
  });

  it('records no reaction Telegram refuses', async () => {
    await startBot(new ScriptedAgent({ output: 'Noted.' }));
    const [asked] = await askAndWait('thanks');
    telegram.failNext('setMessageReaction', {
      error_code: 400,
      description: 'Bad Request: REACTION_INVALID',
    });

    await expect(bot.react(inDm, asked!.id, '👍')).rejects.toThrow('REACTION_INVALID');

    expect(telegram.botReactions).toEqual([]);
    expect(await sqlite.getReactions(inDm, asked!.id)).toEqual([]);
  });
});
