import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot, ColloquyError } from 'colloquy';
import type { Agent } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeSlack } from 'colloquy/testing';
import { ScriptedAgent, streamingAgent } from '../../fixtures/scripted-agent.js';
import { watched } from '../../fixtures/watched-store.js';
import { startSlackBot } from './slack.fixtures.js';

const DM = 'D0ALICE';
const inDm = 'slack:T0FAKE:D0ALICE';
const PDF = Buffer.from('%PDF-1.7 invoice 4711');

describe('files out and reactions on Slack (Bolt and web-api against FakeSlack, SQLite store)', () => {
  let slack: FakeSlack;
  let sqlite: SqliteConversationStore;
  let store: ReturnType<typeof watched>;
  let bot: Bot;
  let errors: ColloquyError[];

  async function startBot(agent: Agent): Promise<void> {
    ({ bot, errors } = await startSlackBot(slack, { agents: [agent], store: store.store }));
  }

  /** Alice writes `text` in her DM; resolves with the turns once the reply is confirmed sent. */
  async function askAndWait(text: string) {
    await slack.message({ channel: DM, user: 'U0ALICE', text });
    return store.turns(inDm, (t) => t.some((turn) => turn.delivery === 'sent'));
  }

  beforeEach(async () => {
    slack = await FakeSlack.start();
    slack.addUser('U0ALICE', 'alice');
    sqlite = new SqliteConversationStore({ path: ':memory:' });
    store = watched(sqlite);
  });

  afterEach(async () => {
    await bot?.stop();
    await slack.close();
    await sqlite.close();
  });

  it('uploads a file with files.uploadV2 after the text, and records it under the reply', async () => {
    const invoice = { name: 'invoice-4711.pdf', data: PDF, mimeType: 'application/pdf' };
    await startBot(new ScriptedAgent({ output: 'Here is the invoice.', files: [invoice] }));
    const turns = await askAndWait('invoice for 4711 please');
    const reply = turns.at(-1)!;

    const methods = slack.calls.map((call) => call.method);
    expect(methods.indexOf('chat.postMessage')).toBeLessThan(
      methods.indexOf('files.getUploadURLExternal'),
    );
    expect(methods).toContain('files.completeUploadExternal');
    expect(methods).not.toContain('files.info'); // the reply is named by its text
    const [upload] = slack.files.uploads;
    expect(upload).toMatchObject({ filename: 'invoice-4711.pdf', channel: DM });
    expect(upload?.bytes.equals(PDF)).toBe(true);
    expect(reply).toMatchObject({
      content: 'Here is the invoice.',
      delivery: 'sent',
      attachments: [
        {
          kind: 'file',
          name: 'invoice-4711.pdf',
          mimeType: 'application/pdf',
          size: PDF.length,
          platformFileId: upload!.id,
        },
      ],
    });
    const rows = sqlite.db
      .prepare('SELECT message_id, name, platform_file_id FROM message_attachments')
      .all();
    expect(rows).toEqual([
      { message_id: reply.id, name: 'invoice-4711.pdf', platform_file_id: upload!.id },
    ]);
    expect(errors).toEqual([]);
  });

  it('names the file in the reply record before the upload starts', async () => {
    const invoice = { name: 'invoice-4711.pdf', data: PDF, mimeType: 'application/pdf' };
    await startBot(new ScriptedAgent({ output: 'Here is the invoice.', files: [invoice] }));
    const upload = slack.holdNext('files.getUploadURLExternal');
    await slack.message({ channel: DM, user: 'U0ALICE', text: 'invoice for 4711 please' });
    await upload.arrived;
    const rows = sqlite.db
      .prepare(
        `SELECT m.delivery, a.name, a.mime_type, a.size, a.platform_file_id
         FROM message_attachments a JOIN messages m ON m.id = a.message_id`,
      )
      .all();
    upload.release();
    await store.turns(inDm, (t) => t.some((turn) => turn.delivery === 'sent'));

    expect(rows).toEqual([
      {
        delivery: 'sending',
        name: 'invoice-4711.pdf',
        mime_type: 'application/pdf',
        size: PDF.length,
        platform_file_id: null,
      },
    ]);
  });

  it('reports a file Slack refuses in one error, and still records the text', async () => {
    const invoice = { name: 'invoice-4711.pdf', data: PDF, mimeType: 'application/pdf' };
    await startBot(new ScriptedAgent({ output: 'Here is the invoice.', files: [invoice] }));
    slack.failNext('files.getUploadURLExternal', { error: 'not_allowed_token_type' });
    const turns = await askAndWait('invoice for 4711 please');
    await bot.idle();

    expect(slack.files.uploads).toEqual([]);
    expect(turns.at(-1)).toMatchObject({ content: 'Here is the invoice.', delivery: 'sent' });
    expect(turns.at(-1)).not.toHaveProperty('attachments');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(/^not sent: invoice-4711\.pdf: .*not_allowed_token_type/);
  });

  it('names the message that shares a file posted alone, and records a reaction on it on the post', async () => {
    const invoice = { name: 'invoice-4711.pdf', data: PDF, mimeType: 'application/pdf' };
    await startBot(new ScriptedAgent({ output: 'unused' }));

    const receipt = await bot.send(inDm, { content: '', files: [invoice] });
    const [upload] = slack.files.uploads;
    await slack.react({ channel: DM, user: 'U0ALICE', ts: upload!.ts, reaction: '+1' });

    expect(receipt).toMatchObject({ status: 'sent', messageIds: [upload!.ts] });
    const post = await sqlite.getMessage(inDm, receipt.id);
    expect(post?.metadata.messageId).toBe(upload!.ts);
    expect(await sqlite.getReactions(inDm, receipt.id)).toMatchObject([
      { participantId: 'slack:U0ALICE', reaction: '+1' },
    ]);
    expect(slack.calls.filter((call) => call.method === 'files.info')).toHaveLength(1);
  });

  it("joins the message sharing a streamed reply's file to the reply's parts, and records a reaction on it on the reply", async () => {
    const invoice = { name: 'invoice-4711.pdf', data: PDF, mimeType: 'application/pdf' };
    await startBot(streamingAgent({ output: 'Here is the invoice.', files: [invoice] }));

    const turns = await askAndWait('invoice for 4711 please');
    const reply = turns.at(-1)!;
    const [upload] = slack.files.uploads;
    await slack.react({ channel: DM, user: 'U0ALICE', ts: upload!.ts, reaction: 'eyes' });

    expect(reply.metadata.partMessageIds).toEqual([upload!.ts]);
    expect(await sqlite.getReactions(inDm, reply.id)).toMatchObject([
      { participantId: 'slack:U0ALICE', reaction: 'eyes' },
    ]);
  });

  it('records a file Slack is still sharing without its message, after one files.info call', async () => {
    const invoice = { name: 'invoice-4711.pdf', data: PDF, mimeType: 'application/pdf' };
    await startBot(new ScriptedAgent({ output: 'unused' }));
    slack.files.sharesPending = true;

    const receipt = await bot.send(inDm, { content: '', files: [invoice] });

    const post = await sqlite.getMessage(inDm, receipt.id);
    expect(post).toMatchObject({ delivery: 'sent', attachments: [{ name: 'invoice-4711.pdf' }] });
    expect(post?.metadata).not.toHaveProperty('messageId');
    expect(slack.calls.filter((call) => call.method === 'files.info')).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  it('reacts by Slack name to the turn it answers, recorded with the bot as participant', async () => {
    await startBot(new ScriptedAgent({ output: 'Looking.' }, (ctx) => ctx.react!('👀')));
    const turns = await askAndWait('is 4711 shipped?');
    const asked = turns[0]!;

    expect(slack.reactions).toEqual([
      { channel: DM, timestamp: asked.metadata.messageId, name: 'eyes' },
    ]);
    expect(await sqlite.getReactions(inDm, asked.id)).toMatchObject([
      { participantId: 'slack:U0BOT', reaction: 'eyes' },
    ]);
  });
});
