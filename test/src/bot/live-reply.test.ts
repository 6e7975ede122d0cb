import { describe, expect, it } from 'vitest';
import { editedStream } from '../../../channels/shared/stream.js';
import { LiveReply } from '../../../src/bot/stream.js';
import type { Channel } from '../../../src/channel.js';
import type { StreamOptions } from '../../../src/channel/stream.js';
import { PlatformError } from '../../../src/errors.js';
import type { ColloquyError } from '../../../src/errors.js';
import type { StoreOperation } from '../../../src/store.js';
import type { NewMessage } from '../../../src/types.js';

const inbound = {
  id: 'turn-1',
  conversationId: 'x:1',
  participant: { kind: 'human', id: 'ada' },
  content: 'where is my order?',
  timestamp: new Date().toISOString(),
  metadata: { channelType: 'x', channelId: '1', messageId: 'in-1' },
} as unknown as NewMessage;

const reply = (content: string) =>
  ({
    ...inbound,
    id: 'reply-1',
    content,
    participant: { kind: 'agent', id: 'support' },
  }) as NewMessage;

/** The reply to `inbound` streamed on `channel`, its store writes kept in `ops`. */
function liveReply(
  channel: Channel,
  ops: StoreOperation[],
  report?: (error: ColloquyError) => void,
): LiveReply {
  return new LiveReply({
    id: 'reply-1',
    write: async (op) => void ops.push(op),
    channel,
    inbound,
    turn: reply,
    recording: () => {},
    showing: () => {},
    ...(report !== undefined && { report }),
  });
}

describe('a streamed reply whose edit the platform refuses', () => {
  it('keeps the posted part and the text it shows in the row, recorded sent', async () => {
    // given a platform that takes the post and the first edit, and refuses the next edit
    const ops: StoreOperation[] = [];
    const shown: string[] = [];
    // The reply the platform's calls write further into, as a model writing on would.
    const writing: { live?: LiveReply } = {};
    let refuse!: () => void;
    const refused = new Promise<void>((resolve) => (refuse = resolve));
    const channel = {
      type: 'x',
      stream: (_message: unknown, options: never) =>
        editedStream<string>(
          {
            parts: (text) => [text],
            textOf: (part) => part,
            post: async (part) => {
              shown.push(part);
              writing.live!.update('Your order left');
              return { id: 'm1', timestamp: new Date().toISOString() };
            },
            edit: async (_id, part) => {
              if (shown.length === 1) {
                shown.push(part);
                writing.live!.update('Your order left the warehouse');
                return;
              }
              refuse();
              throw new PlatformError('x', 'message deleted', { transient: false } as never);
            },
            editEveryMs: 0,
            retryAfterMs: () => undefined,
            fail: (error) => error as PlatformError,
          },
          options,
        ),
    } as unknown as Channel;
    const live = liveReply(channel, ops);
    writing.live = live;

    // when the answer streams and an edit is refused
    live.update('Your');
    await refused;
    const finished = await live
      .finish(reply('Your order left the warehouse today.'))
      .catch((error: unknown) => error);

    // then the platform shows the posted part with the text before the refused edit
    expect(finished).toBeInstanceOf(PlatformError);
    expect(shown).toEqual(['Your', 'Your order left']);
    // and the row says the same: sent, with the part's id and that text
    const last = ops.at(-1) as Extract<StoreOperation, { kind: 'confirm' }>;
    expect(last.confirmation).toMatchObject({
      messageIds: ['m1'],
      delivery: 'sent',
      content: 'Your order left',
    });
  });

  it('keeps the text shown when the refused change had nothing new to record', async () => {
    // given a platform stream that shows 'Your order left' and then refuses a change with the
    // same text to record (an append after others, the text recorded once for them all)
    const ops: StoreOperation[] = [];
    const channel = {
      type: 'x',
      stream: (_message: unknown, options: StreamOptions) => ({
        update: () => {},
        end: async () => {
          await options.showing!({ messageIds: ['m1'], shown: 'Your order left' });
          await options.showing!({ messageIds: ['m1'], shown: 'Your order left' });
          throw new PlatformError('x', 'message deleted', { transient: false } as never);
        },
      }),
    } as unknown as Channel;
    const live = liveReply(channel, ops);

    // when the answer ends with the refused change
    live.update('Your');
    const finished = await live
      .finish(reply('Your order left today.'))
      .catch((error: unknown) => error);

    // then the row holds what the platform shows
    expect(finished).toBeInstanceOf(PlatformError);
    const last = ops.at(-1) as Extract<StoreOperation, { kind: 'confirm' }>;
    expect(last.confirmation).toMatchObject({
      messageIds: ['m1'],
      delivery: 'sent',
      content: 'Your order left',
    });
  });
});

describe('a streamed reply with files', () => {
  it('names its files in the row before the first upload, and confirms them as answered', async () => {
    // given a platform that shows the text, and uploads files once asked
    const ops: StoreOperation[] = [];
    let before: StoreOperation[] = [];
    const channel = textThenFiles(async () => {
      before = [...ops];
      return { messageIds: ['m2'], files: [{ ...PDF, platformFileId: 'F1' }] };
    });

    // when the answer ends with a file to send
    await finishWithFile(liveReply(channel, ops));

    // then the row named the file before the upload, and the end holds it as uploaded
    const confirmations = (list: StoreOperation[]) =>
      list.flatMap((op) => (op.kind === 'confirm' ? [op.confirmation] : []));
    expect(confirmations(before).at(-1)).toMatchObject({
      delivery: 'sending',
      attachments: [PDF],
    });
    // with the id of the message that carries the file among the reply's parts
    expect(confirmations(ops).at(-1)).toMatchObject({
      delivery: 'sent',
      messageIds: ['m1', 'm2'],
      attachments: [{ ...PDF, platformFileId: 'F1' }],
    });
  });

  it('is the text alone, sent, when the upload throws', async () => {
    // given a platform that shows the text, and whose upload fails
    const ops: StoreOperation[] = [];
    const reported: unknown[] = [];
    const channel = textThenFiles(async () => {
      throw new PlatformError('x', 'upload refused', { transient: false } as never);
    });
    const live = liveReply(channel, ops, (error) => void reported.push(error));

    // when the answer ends with a file to send
    const { sent } = await finishWithFile(live);

    // then the reply is confirmed sent with the text's id and no file, and the failure reported
    const last = ops.at(-1) as Extract<StoreOperation, { kind: 'confirm' }>;
    expect(last.confirmation).toMatchObject({
      delivery: 'sent',
      messageIds: ['m1'],
      attachments: [],
    });
    expect(last.confirmation.turn?.attachments).toBeUndefined();
    expect(sent.metadata.messageId).toBe('m1');
    expect(String(reported)).toMatch(
      /could not send the files of streamed reply reply-1: upload refused/,
    );
  });
});

const PDF = { kind: 'file', name: 'invoice.pdf', mimeType: 'application/pdf', size: 4 };

/** A platform that shows the whole text as one message, `m1`, and posts files with `send`. */
function textThenFiles(send: () => Promise<unknown>): Channel {
  return {
    type: 'x',
    stream: (_message: unknown, options: StreamOptions) => ({
      update: () => {},
      end: async (text: string) => {
        await options.showing!({ messageIds: ['m1'], shown: text });
        return { messageIds: ['m1'] };
      },
    }),
    send,
  } as unknown as Channel;
}

/** Streams 'Here' and ends the reply with its text whole and invoice.pdf to send. */
function finishWithFile(live: LiveReply) {
  live.update('Here');
  const file = { name: 'invoice.pdf', data: Buffer.from('%PDF'), mimeType: 'application/pdf' };
  return live.finish(reply('Here is the invoice.'), undefined, [file]);
}
