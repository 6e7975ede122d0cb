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

describe.skipIf(!postgresReachable)('the Postgres views over JSON columns', () => {
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
});
