import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageAttachment, MessageSource, NewMessage } from 'colloquy';
import type { PostgresConversationStore } from 'colloquy/postgres';
import {
  dropTestDatabases,
  numberedTurn,
  openPostgresStore,
  postgresReachable,
  testDatabase,
} from './postgres.fixtures.js';

// The views read JSON a platform or a retriever wrote: one bad value reads as NULL in its own
// row and never fails the query for every other row.

/** A value of the wrong type, as a platform payload or a tool can hand one over. */
const bad = <T>(value: unknown) => value as T;

describe.skipIf(!postgresReachable)('the Postgres JSON columns and the views over them', () => {
  let store: PostgresConversationStore;
  beforeAll(async () => {
    store = await openPostgresStore(await testDatabase());
  });
  afterAll(async () => {
    await store.close();
    await dropTestDatabases();
  });

  it('reads a file size that is not a whole number of bytes as NULL, the other files as sent', async () => {
    // given a turn whose files carry sizes as platforms send them, some not numbers at all
    const sizes = [2048, bad<number>('12 KB'), 1.5, 1e21, -1, bad<number>({ bytes: 3 }), 0];
    const attachments: MessageAttachment[] = sizes.map((size, i) => ({
      kind: 'file',
      name: `f${i}.pdf`,
      size,
    }));
    const turn: NewMessage = {
      ...numberedTurn('views', 1, 1, { kind: 'user', id: 'telegram:1' }),
      attachments,
    };
    await store.append(turn);

    // when the view is read
    const { rows } = await store.pool.query(
      'SELECT name, size FROM message_attachments WHERE message_id = $1 ORDER BY position',
      [turn.id],
    );

    // then each file has its row, a size only where it is a whole number of bytes
    expect(rows).toEqual([
      { name: 'f0.pdf', size: 2048 },
      { name: 'f1.pdf', size: null },
      { name: 'f2.pdf', size: null },
      { name: 'f3.pdf', size: null },
      { name: 'f4.pdf', size: null },
      { name: 'f5.pdf', size: null },
      { name: 'f6.pdf', size: 0 },
    ]);
  });

  it('reads a source score that is not a number as NULL, the other sources as cited', async () => {
    // given an agent reply citing sources, one scored in words by its retriever
    const sources: MessageSource[] = [
      { documentId: 'refunds.md', score: 0.91 },
      { documentId: 'faq.md', score: bad<number>('high') },
    ];
    const reply: NewMessage = {
      ...numberedTurn('views', 2, 1, { kind: 'agent', id: 'support-agent' }),
      sources,
    };
    await store.append(reply);

    // when the view is read
    const { rows } = await store.pool.query(
      'SELECT document_id, score FROM message_sources WHERE message_id = $1 ORDER BY position',
      [reply.id],
    );

    // then both sources have their row, a score only where it is a number
    expect(rows).toEqual([
      { document_id: 'refunds.md', score: 0.91 },
      { document_id: 'faq.md', score: null },
    ]);
  });

  it('stores turns whose JSON carries half a surrogate pair, that half read as U+FFFD', async () => {
    // given two turns in one burst, one whose platform text was cut inside an emoji (as a
    // UTF-16 offset can cut it) in its metadata and a file name
    const cut = '\u{1F44D}'.slice(0, 1);
    const broken: NewMessage = {
      ...numberedTurn('views', 3, 2, { kind: 'user', id: 'telegram:2' }),
      attachments: [{ kind: 'file', name: `thumbs ${cut}.png` }],
    };
    broken.metadata = { ...broken.metadata, quote: `re: ${cut}`, whole: '\u{1F44D}' };
    const next = numberedTurn('views', 4, 2, { kind: 'user', id: 'telegram:2' });

    // when the burst is committed
    const results = await store.commit([
      { kind: 'append', message: broken },
      { kind: 'append', message: next },
    ]);

    // then both are stored, the lone half replaced and the whole emoji kept
    expect(results.map((result) => result.ok)).toEqual([true, true]);
    const [read] = await store.get('telegram:2', { limit: 1, before: next.timestamp });
    expect(read?.metadata).toMatchObject({ quote: 're: \ufffd', whole: '\u{1F44D}' });
    expect(read?.attachments).toEqual([{ kind: 'file', name: 'thumbs \ufffd.png' }]);
  });

  it('confirms a reply and records its run whatever text the platform answered with', async () => {
    // given a reply recorded before its send, and its run
    const reply = numberedTurn('views', 5, 3, { kind: 'agent', id: 'support-agent' });
    const run = {
      id: 'views-5:support-agent',
      messageId: 'views-5',
      conversationId: reply.conversationId,
      agentId: 'support-agent',
      status: 'running',
      createdAt: reply.timestamp,
      attempts: 1,
    } as const;
    await store.commit([{ kind: 'reply', message: reply }]);

    // when the platform answers with a NUL and half an emoji, and the run fails with them
    const cut = '\u{1F44D}'.slice(0, 1);
    const results = await store.commit([
      {
        kind: 'confirm',
        confirmation: {
          id: reply.id,
          conversationId: reply.conversationId,
          messageIds: ['p-5'],
          delivery: 'sent',
          content: 'shown\u0000',
          metadata: { platformNote: `cut ${cut}` },
        },
      },
      { kind: 'run', run: { ...run, status: 'failed', error: `refused: \u0000${cut}` } },
    ]);

    // then both are recorded, the bad characters as U+FFFD
    expect(results.map((result) => result.ok)).toEqual([true, true]);
    const [read] = await store.get(reply.conversationId, { limit: 1 });
    expect(read).toMatchObject({
      content: 'shown\ufffd',
      metadata: { platformNote: 'cut \ufffd' },
    });
    const [recorded] = await store.getRuns({ messageId: run.messageId });
    expect(recorded?.error).toBe('refused: \ufffd\ufffd');
  });
});
