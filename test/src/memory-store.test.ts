import { describe, expect, it } from 'vitest';
import { InMemoryConversationStore } from '../../src/memory-store.js';
import type { NewMessage } from '../../src/types.js';
import { describeLeaseContract } from '../contracts/lease-contract.js';
import { describeStoreContract } from '../contracts/store-contract.js';

describeStoreContract('InMemoryConversationStore', () => new InMemoryConversationStore());

function turn(conversationId: string, n: number): NewMessage {
  return {
    id: `${conversationId}:${n}`,
    conversationId,
    participant: { kind: 'user', id: 'console:alice', displayName: 'Alice' },
    content: `message ${n}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    scope: 'dm',
    metadata: {
      channelType: 'console',
      channelId: conversationId,
      mentions: [],
      messageId: `${n}`,
    },
  };
}

describe('InMemoryConversationStore bounds', () => {
  it('evicts the least recently used conversation beyond maxConversations', async () => {
    // given a store that holds two conversations
    const store = new InMemoryConversationStore({ maxConversations: 2 });
    await store.append(turn('a', 1));
    await store.append(turn('b', 2));
    // when the older one is read and a third one starts
    await store.get('a');
    await store.append(turn('c', 3));
    // then the least recently used one went
    expect(await store.getConversation('b')).toBeUndefined();
    expect(await store.get('a')).toHaveLength(1);
    expect(await store.get('c')).toHaveLength(1);
  });

  it('keeps 500 conversations by default', async () => {
    const store = new InMemoryConversationStore();
    for (let i = 0; i <= 500; i++) await store.append(turn(`c${i}`, 1));
    expect(await store.getConversation('c0')).toBeUndefined();
    expect(await store.getConversation('c1')).toBeDefined();
    expect(await store.getConversation('c500')).toBeDefined();
  });

  it('drops the oldest turns beyond maxMessagesPerConversation', async () => {
    // given a store that keeps three turns per conversation
    const store = new InMemoryConversationStore({ maxMessagesPerConversation: 3 });
    // when five arrive
    for (let n = 1; n <= 5; n++) await store.append(turn('a', n));
    // then the newest three remain and are counted
    const kept = await store.get('a');
    expect(kept.map((m) => m.content)).toEqual(['message 3', 'message 4', 'message 5']);
    expect((await store.getConversation('a'))?.messageCount).toBe(3);
    expect(await store.search('a', 'message 1')).toHaveLength(3);
  });

  it('keeps 500 turns per conversation by default', async () => {
    const store = new InMemoryConversationStore();
    for (let n = 1; n <= 501; n++) await store.append(turn('a', n));
    const kept = await store.get('a', { limit: 1000 });
    expect(kept).toHaveLength(500);
    expect(kept[0]?.content).toBe('message 2');
  });

  it('hands out copies: changing a returned turn does not change the store', async () => {
    const store = new InMemoryConversationStore();
    const { message } = await store.append(turn('a', 1));
    message.content = 'tampered';
    const [read] = await store.get('a');
    read!.metadata.mentions!.push('x');
    expect((await store.get('a'))[0]).toMatchObject({ content: 'message 1' });
    expect((await store.get('a'))[0]?.metadata.mentions).toEqual([]);
  });

  it('starts from the first page when given an unreadable cursor', async () => {
    const store = new InMemoryConversationStore();
    await store.append(turn('a', 1));
    const page = await store.listConversations({ cursor: 'not a cursor' });
    expect(page.items.map((c) => c.id)).toEqual(['a']);
  });
});

describeLeaseContract('InMemoryConversationStore', () => new InMemoryConversationStore());
