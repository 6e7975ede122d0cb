import { beforeEach, describe, expect, it } from 'vitest';
import { Bot } from 'colloquy';
import type { Logger, SentMessage, UnsettledReply } from 'colloquy';
import { MemoryChannel } from 'colloquy/testing';
import { tempSqliteStore } from '../../fixtures/temp-sqlite-store.js';
import { runningOn, scriptedAgent } from './bot.fixtures.js';

const PDF = { kind: 'file' as const, name: 'invoice.pdf', mimeType: 'application/pdf', size: 21 };

/** A channel that settles a reply by finding its text posted, reporting `files` with it. */
class FindingChannel extends MemoryChannel {
  settled: UnsettledReply[] = [];

  constructor(readonly files?: SentMessage['files']) {
    super();
  }

  async settle(reply: UnsettledReply): Promise<SentMessage> {
    this.settled.push(reply);
    return { messageIds: ['found-1'], ...(this.files !== undefined && { files: this.files }) };
  }
}

describe('a reply with a file a crash left sending, settled on restart', () => {
  const temp = tempSqliteStore('settle-files');
  const warnings: string[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn: (line) => void warnings.push(line),
    error() {},
  };

  beforeEach(() => {
    warnings.length = 0;
  });

  /** Records a turn, its reply `sending` with invoice.pdf, and its run; starts the bot on `channel`. */
  async function restartOn(channel: MemoryChannel, resend: boolean) {
    const turn = channel.turn('@support-agent invoice please');
    const { messageId: _, ...place } = turn.metadata;
    const reply = {
      ...turn,
      id: `${turn.id}:support-agent:reply`,
      content: 'Here is the invoice.',
      participant: { kind: 'agent' as const, id: 'support-agent' },
      attachments: [PDF],
      metadata: place,
    };
    await temp.store.commit([
      { kind: 'append', message: turn },
      { kind: 'reply', message: reply },
      { kind: 'run', run: runningOn(turn, { replyId: reply.id }) },
    ]);
    temp.bot = new Bot({
      channels: [channel],
      agents: [scriptedAgent('support-agent', () => 'resumed')],
      store: temp.store,
      ...(resend && { unconfirmedReplies: 'resend' as const }),
      logger,
    });
    temp.bot.catch(() => {});
    await temp.bot.start();
    await temp.bot.idle();
    await temp.bot.settled();
    const row = temp.store.db
      .prepare('SELECT delivery, attachments FROM messages WHERE id = ?')
      .get(reply.id);
    const files = temp.store.db
      .prepare('SELECT COUNT(*) AS n FROM message_attachments WHERE message_id = ?')
      .get(reply.id) as { n: number };
    return { row, files: files.n };
  }

  it('is recorded sent without the file when it is sent again with its text only', async () => {
    // given a channel that cannot settle, and a bot that sends such replies again
    const channel = new MemoryChannel();

    // when the bot restarts
    const { row, files } = await restartOn(channel, true);

    // then the text alone goes out, and the record lists no file, saying so once
    expect(channel.sent.map((m) => [m.content, m.files])).toEqual([
      ['Here is the invoice.', undefined],
    ]);
    expect(row).toEqual({ delivery: 'sent', attachments: null });
    expect(files).toBe(0);
    expect(warnings).toEqual([
      expect.stringMatching(
        /settled without its 1 file\(s\) \(invoice\.pdf\): their bytes are not kept/,
      ),
    ]);
  });

  it('is recorded sent without the file when the platform finds the text but shows no file', async () => {
    // given a channel that finds the reply's text posted, and cannot see its file message
    const channel = new FindingChannel();

    // when the bot restarts
    const { row, files } = await restartOn(channel, false);

    // then nothing is posted, and the record keeps no file it cannot vouch for
    expect(channel.settled).toHaveLength(1);
    expect(channel.sent).toEqual([]);
    expect(row).toEqual({ delivery: 'sent', attachments: null });
    expect(files).toBe(0);
    expect(warnings).toHaveLength(1);
  });

  it('keeps the file the platform shows with the reply it found', async () => {
    // given a channel that finds the reply posted with its file
    const channel = new FindingChannel([{ ...PDF, platformFileId: 'F1' }]);

    // when the bot restarts
    const { row, files } = await restartOn(channel, false);

    // then the record holds the file as the platform shows it, and nothing is said
    expect(row).toMatchObject({ delivery: 'sent' });
    expect(JSON.parse((row as { attachments: string }).attachments)).toEqual([
      { ...PDF, platformFileId: 'F1' },
    ]);
    expect(files).toBe(1);
    expect(warnings).toEqual([]);
  });
});
