import { describe, expect, it } from 'vitest';
import { assemblePrompt, conversationSearchTool, InMemoryConversationStore } from 'colloquy';
import type { ConversationStore, NewMessage } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { tempDirs } from '../../fixtures/temp-dirs.js';

const temp = tempDirs();
const C = 'slack:T1:C1';
const inChannel = { conversationId: C, scope: 'channel' as const };
const meta = { channelType: 'slack', channelId: 'C1' };

/** The agent's post shown to Slack user U1 only, then a question from Bob and one from Alice. */
const ephemeral: NewMessage = {
  ...inChannel,
  id: 'post:1',
  participant: { kind: 'agent', id: 'support', displayName: 'support' },
  content: 'Only you see this: your reset code is 4242',
  timestamp: '2026-11-28T08:00:00.000Z',
  metadata: { ...meta, origin: 'post', visibleTo: 'U1', mentions: [] },
};
const asks = (id: string, user: string, name: string, at: string): NewMessage => ({
  ...inChannel,
  id,
  participant: { kind: 'user', id: `slack:${user}`, displayName: name },
  content: '@support what did you last say? reset code',
  timestamp: at,
  metadata: { ...meta, mentions: ['support'] },
});
const bob = asks('b1', 'U2', 'Bob', '2026-11-28T08:01:00.000Z');
const alice = asks('a1', 'U1', 'Alice', '2026-11-28T08:02:00.000Z');

const stores: [string, () => ConversationStore][] = [
  ['in memory', () => new InMemoryConversationStore()],
  ['SQLite file', () => new SqliteConversationStore({ path: `${temp.make('vis')}/bot.db` })],
];

describe.each(stores)('a turn shown to one person only (%s)', (_, makeStore) => {
  it('is in the prompt answering that person only, and found by their search only', async () => {
    const store = makeStore();
    for (const turn of [ephemeral, bob, alice]) await store.append(turn);

    const forBob = await assemblePrompt(store, C, 'support', 'support', { currentMessage: bob });
    expect(JSON.stringify(forBob.messages)).not.toContain('4242');
    const forAlice = await assemblePrompt(store, C, 'support', 'support', {
      currentMessage: alice,
    });
    expect(JSON.stringify(forAlice.messages)).toContain('4242');

    const search = (reader?: NewMessage) =>
      conversationSearchTool(store, C, reader?.participant).execute!(
        { query: 'reset code' },
        { toolCallId: 't', messages: [] },
      );
    expect(await search(bob)).not.toContain('4242');
    expect(await search(undefined)).not.toContain('4242');
    expect(await search(alice)).toContain('4242');
    await store.close?.();
  });
});
