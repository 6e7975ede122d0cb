import { describe, expect, it } from 'vitest';
import type { MessageAttachment } from '../../src/attachments.js';
import { commitWith } from '../../src/commit.js';
import { capabilitiesOf } from '../../src/store.js';
import type { ConversationStore, StoreOperation } from '../../src/store.js';
import type { NewMessage } from '../../src/types.js';

/**
 * What every store keeps of a turn's files: `StoredMessage.attachments`, read back the same
 * by every read, through an edit and a deletion, and through a batch commit. Called from the
 * store contract, so every store runs it.
 *
 * @example
 * ```ts
 * describeAttachmentContract(() => store);
 * ```
 */
export function describeAttachmentContract(store: () => ConversationStore): void {
  describe('attachments', () => {
    it('reads a photo with its caption and a document back the same every way', async () => {
      const photo = turn('p-1', 'the broken invoice', [PHOTO, PDF]);
      await store().append(photo);
      const plain = turn('p-2', 'no files here');
      await store().append(plain);

      const [first, second] = await store().get(C);
      expect(first).toMatchObject({ content: 'the broken invoice', attachments: [PHOTO, PDF] });
      expect(second).not.toHaveProperty('attachments');
      expect(await store().getMessage?.(C, photo.id)).toMatchObject({ attachments: [PHOTO, PDF] });
      expect((await store().search(C, 'invoice'))[0]).toMatchObject({ attachments: [PHOTO, PDF] });
    });

    it('keeps a voice note with no caption, a huge file and an unknown MIME type', async () => {
      const odd: MessageAttachment[] = [
        { kind: 'voice', mimeType: 'audio/ogg', size: 5123, platformFileId: 'AwACAgIAAxk' },
        { kind: 'file', name: 'disk.img', mimeType: 'application/x-made-up', size: 2 ** 40 },
        { kind: 'sticker' },
      ];
      await store().append(turn('p-3', '', odd));
      const [stored] = await store().get(C);
      expect(stored).toMatchObject({ content: '', attachments: odd });
    });

    it('keeps them through an edit of the caption and a deletion', async () => {
      await store().append(turn('p-4', 'first caption', [PHOTO]));
      await store().recordEdit({ ...REF, messageId: 'p-4', content: 'new caption', editedAt: AT });
      await store().recordDeletion({ ...REF, messageId: 'p-4', deletedAt: AT });
      const [stored] = await store().get(C, { includeDeleted: true });
      expect(stored).toMatchObject({ content: 'new caption', attachments: [PHOTO] });
    });

    it('commits a turn with files in a batch like one appended alone', async () => {
      const commit = store().commit?.bind(store());
      if (commit === undefined) return;
      const [result] = await commit([{ kind: 'append', message: turn('p-5', 'batch', [PDF]) }]);
      expect(result).toMatchObject({ ok: true });
      expect((await store().get(C))[0]).toMatchObject({ attachments: [PDF] });
    });

    it('records the files a reply sent with the confirmation that ends it', async () => {
      const reply: NewMessage = {
        ...turn('r-1', 'here is the report'),
        id: 'telegram:77:run-1:reply',
        participant: { kind: 'agent', id: 'support-agent' },
        metadata: { channelType: 'telegram', channelId: '77', mentions: [] },
      };
      const sent = { ...reply, metadata: { ...reply.metadata, messageId: 'r-1' } };
      const confirmation = {
        id: reply.id,
        conversationId: C,
        messageIds: ['r-1'],
        delivery: 'sent' as const,
        attachments: [PDF],
        turn: { ...sent, attachments: [PDF] },
      };
      const results = await commitWith(store(), capabilitiesOf(store()).ledger, [
        { kind: 'reply', message: reply },
        { kind: 'confirm', confirmation },
      ]);
      expect(results).toMatchObject([{ ok: true }, { ok: true }]);
      const [stored] = await store().get(C);
      expect(stored).toMatchObject({ id: reply.id, attachments: [PDF] });
    });

    it('names the files a reply is sending, then keeps only those the platform answered', async () => {
      const { ledger } = capabilitiesOf(store());
      const sending = { kind: 'file', name: PDF.name, mimeType: PDF.mimeType, size: PDF.size };
      const refused = { kind: 'image', name: 'chart.png', mimeType: 'image/png', size: 1024 };
      const byId = async (id: string) => (await store().get(C)).find((t) => t.id === id);
      const reply = replyTurn('run-2', [sending, refused]);
      await commitWith(store(), ledger, [{ kind: 'reply', message: reply }]);
      // A store that keeps no outbox records the reply once it went out.
      if (ledger) expect(await byId(reply.id)).toMatchObject({ attachments: [sending, refused] });

      await commitWith(store(), ledger, [sentConfirmation(reply, 'r-2', [PDF])]);
      expect(await byId(reply.id)).toMatchObject({ attachments: [PDF] });

      const none = replyTurn('run-3', [refused]);
      await commitWith(store(), ledger, [{ kind: 'reply', message: none }]);
      await commitWith(store(), ledger, [sentConfirmation(none, 'r-3', [])]);
      expect(await byId(none.id)).toMatchObject({ content: 'here is the report' });
      expect(await byId(none.id)).not.toHaveProperty('attachments');
    });
  });
}

/** A reply turn of `run` recorded with `attachments`, the files it is about to send. */
function replyTurn(run: string, attachments: MessageAttachment[]): NewMessage {
  return {
    ...turn('r', 'here is the report'),
    id: `telegram:77:${run}:reply`,
    participant: { kind: 'agent', id: 'support-agent' },
    metadata: { channelType: 'telegram', channelId: '77', mentions: [] },
    attachments,
  };
}

/** The confirmation that ends `reply`'s send: posted as `messageId`, with `attachments`. */
function sentConfirmation(
  reply: NewMessage,
  messageId: string,
  attachments: MessageAttachment[],
): StoreOperation {
  const { attachments: _, ...turn } = reply;
  const sent = { ...turn, metadata: { ...turn.metadata, messageId } };
  const { id, conversationId } = reply;
  return {
    kind: 'confirm',
    confirmation: {
      ...{ id, conversationId, messageIds: [messageId], delivery: 'sent', attachments },
      turn: attachments.length === 0 ? sent : { ...sent, attachments },
    },
  };
}

const C = 'telegram:77';
const REF = { channelType: 'telegram', channelId: '77' };
const AT = '2026-01-01T00:05:00.000Z';

const PHOTO: MessageAttachment = {
  kind: 'image',
  size: 48213,
  platformFileId: 'AgACAgIAAxkBAAIBZ2V',
  mimeType: 'image/jpeg',
};
const PDF: MessageAttachment = {
  kind: 'file',
  name: 'invoice 88 (final).pdf',
  mimeType: 'application/pdf',
  size: 245760,
  platformFileId: 'BQACAgIAAxkBAAIBaGV',
  url: 'https://files.example.com/f/invoice%2088.pdf',
};

function turn(messageId: string, content: string, attachments?: MessageAttachment[]): NewMessage {
  return {
    id: `telegram:77:${messageId}`,
    conversationId: C,
    participant: { kind: 'user', id: 'telegram:1001', displayName: 'Alice' },
    content,
    timestamp: '2026-01-01T00:00:00.000Z',
    scope: 'dm',
    metadata: { channelType: 'telegram', channelId: '77', messageId, mentions: [] },
    ...(attachments === undefined ? {} : { attachments }),
  };
}
