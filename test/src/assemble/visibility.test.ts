import { describe, expect, it } from 'vitest';
import { assemblePrompt, conversationSearchTool, InMemoryConversationStore } from 'colloquy';
import type { ConversationStore, HistoryPlugin, NewMessage, Summarizer } from 'colloquy';
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

/** Channel chatter after the private post: fourteen questions, Alice and Bob in turn. */
const chatter = (i: number): NewMessage => ({
  ...asks(`q${i}`, i % 2 ? 'U1' : 'U2', i % 2 ? 'Alice' : 'Bob', at(i)),
  content: `@support question ${i}`,
});
const at = (minute: number) => new Date(Date.UTC(2026, 10, 28, 9, minute)).toISOString();
const aliceLater = asks('a2', 'U1', 'Alice', at(30));
const bobLater = asks('b2', 'U2', 'Bob', at(31));

/** A summarizer that retells every turn it is given, as a model keeps the facts. */
const retell: Summarizer = {
  summarize: async ({ previousSummary, turns }) =>
    [previousSummary ?? '', ...turns.map((t) => t.content)].join(' | '),
};
/** A reduce plugin that folds all but the newest four entries into a retelling. */
const folding: HistoryPlugin = {
  name: 'fold',
  reduce: (entries) =>
    entries.length > 6
      ? { covers: entries.length - 4, summary: entries.map((e) => e.content).join(' | ') }
      : undefined,
};

describe.each(stores)('a summary written while answering Alice (%s)', (_, makeStore) => {
  const ways = [
    ['the rolling summary', { rollingSummaryThreshold: 6 }, retell],
    ['a reduce plugin', { plugins: [folding] }, undefined],
  ] as const;

  it.each(ways)(
    "%s leaves her private post out of Bob's prompt, not out of hers",
    async (_, options, summarizer) => {
      const store = makeStore();
      await store.append(ephemeral);
      for (let i = 1; i <= 14; i++) await store.append(chatter(i));
      await store.append(aliceLater);
      await store.append(bobLater);
      const ask = (currentMessage: NewMessage) =>
        assemblePrompt(store, C, 'support', 'support', { ...options, currentMessage }, summarizer);

      // Alice asks first: a summary is due and written while answering her.
      const forAlice = await ask(aliceLater);
      const summary = await store.getSummary(C, 'support');
      const forBob = await ask(bobLater);

      expect(summary?.content).toContain('question 1');
      expect(summary?.content).not.toContain('4242');
      expect(JSON.stringify(forBob.messages)).toContain(summary?.content);
      expect(JSON.stringify(forBob.messages)).not.toContain('4242');
      expect(JSON.stringify(forAlice.messages)).toContain('4242');
      expect(JSON.stringify((await ask(aliceLater)).messages)).toContain('4242');
      await store.close?.();
    },
  );
});
