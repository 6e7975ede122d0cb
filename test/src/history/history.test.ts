import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, describe, expect, it } from 'vitest';
import {
  assemblePrompt,
  BaseAgent,
  Bot,
  History,
  InMemoryConversationStore,
  silentLogger,
  type ColloquyError,
  type ConversationStore,
  type HistoryEntryInput,
} from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { MemoryChannel } from 'colloquy/testing';
import { deferred, scriptedAgent } from '../bot/bot.fixtures.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'colloquy-history-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const file = () => join(dir, `history-${++files}.db`);

const bob = { kind: 'user' as const, id: 'memory:bob', displayName: 'Bob' };
const support = { kind: 'agent' as const, id: 'support', displayName: 'Support' };
const C = 'memory:room';

/** Every shape: a person, an agent's text with reasoning, a call with its result, an answer. */
const conversation: HistoryEntryInput[] = [
  {
    role: 'user',
    id: 'u1',
    participant: bob,
    timestamp: '2026-01-01T10:00:00.000Z',
    content: 'where is order 42?',
  },
  {
    role: 'assistant',
    id: 'a1',
    participant: support,
    timestamp: '2026-01-01T10:00:01.000Z',
    content: 'Let me look.',
    reasoning: 'The user wants the order status; call lookup_order.',
    calls: [{ id: 'call_1', name: 'lookup_order', arguments: { orderId: '42' } }],
  },
  {
    role: 'tool',
    id: 'call_1',
    messageId: 'a1:result',
    participant: support,
    timestamp: '2026-01-01T10:00:02.000Z',
    name: 'lookup_order',
    content: '{"status":"shipped"}',
  },
  {
    role: 'assistant',
    id: 'a2',
    participant: support,
    timestamp: '2026-01-01T10:00:03.000Z',
    content: 'It shipped.',
  },
];

/** Resolves once `listener` has been called `n` times (no sleeps: the calls settle it). */
function counter(history: History) {
  let count = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  const unsubscribe = history.subscribe(() => {
    count++;
    for (const w of waiters) if (count >= w.n) w.resolve();
  });
  return {
    get count() {
      return count;
    },
    reached(n: number): Promise<void> {
      if (count >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    unsubscribe,
  };
}

/** Runs the second-process writer: `count` turns appended to `conversationId` in `path`. */
function otherProcess(path: string, conversationId: string, count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/fixtures/history-writer.ts', path, conversationId, String(count)],
      { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`writer exited ${code}: ${stderr}`)),
    );
  });
}

function dmBot(store: ConversationStore, answer = (text: string) => `re: ${text}`) {
  const channel = new MemoryChannel({ scope: 'dm' });
  const agent = scriptedAgent('support', (m) => answer(m.content));
  const bot = new Bot({ channels: [channel], agents: [agent], store, logger: silentLogger });
  const errors: ColloquyError[] = [];
  bot.catch((error) => void errors.push(error));
  return { bot, channel, errors, agent };
}

describe('History', () => {
  it('keeps the same snapshot until the conversation changes', async () => {
    // given a history with four entries
    const history = new History(new InMemoryConversationStore(), C);
    await history.restore(conversation);
    const first = history.getSnapshot();
    // then reading it again gives the same frozen array
    expect(history.getSnapshot()).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first[0])).toBe(true);
    await history.refresh();
    expect(history.getSnapshot()).toBe(first);
    // and a change makes a new one
    await history.reset();
    expect(history.getSnapshot()).not.toBe(first);
    expect(history.getSnapshot()).toEqual([]);
  });

  it('reads the three entry shapes back, with reasoning, calls and tool results', async () => {
    const history = new History(new InMemoryConversationStore(), C);
    await history.restore(conversation);
    expect(history.getSnapshot()).toEqual(conversation);
    expect(history.length).toBe(4);
    expect(history.lastEntry()).toMatchObject({ role: 'assistant', content: 'It shipped.' });
    expect(history.getToolResult('call_1')?.content).toBe('{"status":"shipped"}');
    expect(history.getToolResult('nope')).toBeUndefined();
    expect(history.totalTokens).toBeGreaterThan(4 * 4);
  });

  it('round-trips through reset, restore, toJSON / fromJSON and clone, on SQLite too', async () => {
    for (const store of [new InMemoryConversationStore(), SqliteConversationStore.open(file())]) {
      // given a history holding the conversation
      const history = new History(store, C);
      await history.restore(conversation);
      const before = history.getSnapshot();
      // when it goes through JSON, is cloned, reset and restored
      const copy = History.fromJSON(JSON.stringify(history));
      expect(copy.getSnapshot()).toEqual(before);
      await copy.ready;
      expect(copy.getSnapshot()).toEqual(before);
      const clone = history.clone();
      await clone.ready;
      const cleared: string[] = [];
      history.on('clear', () => void cleared.push('clear'));
      await history.reset();
      expect(history.length).toBe(0);
      expect(await store.get(C)).toEqual([]);
      await history.restore(copy.getSnapshot());
      // then every copy holds the same entries
      expect(history.getSnapshot()).toEqual(before);
      expect(clone.getSnapshot()).toEqual(before);
      expect(cleared).toEqual(['clear', 'clear']);
      history.close();
      await store.close?.();
    }
  });

  it('adds single entries: text, system and a call with its result, stored as turns', async () => {
    for (const store of [new InMemoryConversationStore(), SqliteConversationStore.open(file())]) {
      // given an empty history that is listened to
      const history = new History(store, C);
      await history.ready;
      const told = counter(history);
      const heard: string[] = [];
      history.on('entry', (entry) => void heard.push(entry.role));
      const added: string[] = [];
      history.use({ name: 'spy', afterAdd: (entry) => void added.push(entry.role) });

      // when a system note, a question, a call and its result are added one at a time
      await history.addText('system', 'The customer is on the premium plan.');
      const question = await history.addText('user', 'Where is order 42?');
      const call = { id: 'call_1', name: 'lookup_order', arguments: { orderId: '42' } };
      await history.addEntry({ role: 'assistant', content: 'Let me look.', calls: [call] });
      const result = await history.addEntry({
        role: 'tool',
        id: 'call_1',
        name: 'lookup_order',
        content: 'shipped',
      });

      // then the snapshot holds them in order, each told once
      expect(history.getSnapshot().map((e) => [e.role, e.content])).toEqual([
        ['system', 'The customer is on the premium plan.'],
        ['user', 'Where is order 42?'],
        ['assistant', 'Let me look.'],
        ['tool', 'shipped'],
      ]);
      expect(question).toMatchObject({ role: 'user', participant: { kind: 'user', id: 'user' } });
      expect(result).toBe(history.getToolResult('call_1'));
      expect(history.lastEntry()).toBe(result);
      expect(heard).toEqual(['system', 'user', 'assistant', 'tool']);
      expect(added).toEqual(['system', 'user', 'assistant', 'tool']);
      expect(told.count).toBe(4);
      // and they are turns of the store: read again, and in a prompt, the note is a system message
      const again = new History(store, C);
      await again.ready;
      expect(again.getSnapshot()).toEqual(history.getSnapshot());
      expect((await store.get(C))[0]?.participant).toEqual({ kind: 'system', id: 'system' });
      const prompt = await assemblePrompt(store, C, 'assistant', 'Assistant', {
        addressedOnlyMode: false,
      });
      expect(prompt.messages[0]).toEqual({
        role: 'system',
        content: 'The customer is on the premium plan.',
      });
      told.unsubscribe();
      history.close();
      again.close();
      await store.close?.();
    }
  });

  it('shows exactly what an entry stored when its store fails partway', async () => {
    // given a history whose store refuses the second turn it is asked to write
    let appends = 0;
    const store = new (class extends InMemoryConversationStore {
      override async append(...args: Parameters<ConversationStore['append']>) {
        if (++appends === 2) throw new Error('disk full (test)');
        return super.append(...args);
      }
    })();
    const history = new History(store, C);
    await history.ready;
    const heard: string[] = [];
    history.on('entry', (entry) => void heard.push(entry.content));

    // when an entry of a text and two calls is added
    const calls = [
      { id: 'call_1', name: 'lookup_order', arguments: { orderId: '42' } },
      { id: 'call_2', name: 'lookup_order', arguments: { orderId: '43' } },
    ];
    const added = history.addEntry({ role: 'assistant', content: 'Let me look.', calls });

    // then it rejects, and the snapshot and its listeners hold what the store holds
    await expect(added).rejects.toThrow('disk full (test)');
    const reread = new History(store, C);
    await reread.ready;
    expect(reread.getSnapshot()).toHaveLength(1);
    expect(history.getSnapshot()).toEqual(reread.getSnapshot());
    expect(heard).toEqual(['Let me look.']);
    history.close();
    reread.close();
  });

  it('tells subscribers once per turn the bot captures, live', async () => {
    // given a bot and a history of its DM, with polling off
    const store = new InMemoryConversationStore();
    const { bot, channel, errors } = dmBot(store);
    await bot.start();
    const history = bot.history(C, { pollIntervalMs: 0 });
    await history.ready;
    const calls = counter(history);
    const entries: string[] = [];
    history.on('entry', (entry) => void entries.push(entry.content));
    // when three exchanges happen (six turns)
    for (const text of ['one', 'two', 'three']) await channel.receive(text, { from: bob });
    await calls.reached(6);
    await bot.stop();
    await history.refresh();
    // then it was told six times, in order, and holds six entries
    expect(calls.count).toBe(6);
    expect(entries).toEqual(['one', 're: one', 'two', 're: two', 'three', 're: three']);
    expect(history.getSnapshot().map((e) => e.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(errors).toEqual([]);
  });

  it('tells subscribers once per turn another process writes to the same SQLite file', async () => {
    // given a bot on a SQLite file and a history of its DM that polls the file
    const path = file();
    const store = SqliteConversationStore.open(path);
    const { bot, channel } = dmBot(store);
    await bot.start();
    const history = bot.history(C, { pollIntervalMs: 20 });
    await history.ready;
    const calls = counter(history);
    // when the bot captures one exchange and another process writes three turns
    await channel.receive('hello', { from: bob });
    await otherProcess(path, C, 3);
    await calls.reached(5);
    await history.refresh();
    // then each of the five turns was told once, none twice
    expect(calls.count).toBe(5);
    expect(history.getSnapshot().map((e) => e.content)).toEqual([
      'hello',
      're: hello',
      'from the other process 1',
      'from the other process 2',
      'from the other process 3',
    ]);
    history.close();
    await bot.stop();
    await store.close();
  });

  it('refuses reset while an agent answers in the conversation', async () => {
    const hold = deferred();
    const store = new InMemoryConversationStore();
    const channel = new MemoryChannel({ scope: 'dm' });
    const answering = deferred();
    const slow = scriptedAgent('slow', async () => {
      answering.resolve();
      await hold.promise;
      return 'done';
    });
    const slowBot = new Bot({ channels: [channel], agents: [slow], store, logger: silentLogger });
    await slowBot.start();
    const history = slowBot.history(C, { pollIntervalMs: 0 });
    const turn = channel.receive('take your time', { from: bob });
    await answering.promise;
    await expect(history.reset()).rejects.toThrow(/an agent is answering/);
    hold.resolve();
    await turn;
    await slowBot.stop();
    await history.reset();
    expect(history.length).toBe(0);
  });

  it("keeps the model's reasoning on the reply, in History and in SQL", async () => {
    // given an agent whose model reasons before it answers
    class Thinker extends BaseAgent {
      name = 'support';
      description = 'thinks';
      instructions = 'Think, then answer.';
      override model = new MockLanguageModelV3({
        doGenerate: async () => ({
          content: [
            { type: 'reasoning', text: 'Bob asks for the time; it is noon.' },
            { type: 'text', text: 'It is noon.' },
          ],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage: {
            inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: 5, text: 3, reasoning: 2 },
          },
          warnings: [],
        }),
      });
    }
    const path = file();
    const store = SqliteConversationStore.open(path);
    const channel = new MemoryChannel({ scope: 'dm' });
    const bot = new Bot({
      channels: [channel],
      agents: [new Thinker()],
      store,
      logger: silentLogger,
    });
    await bot.start();
    // when Bob asks
    await channel.receive('what time is it?', { from: bob });
    await bot.stop();
    // then the reply keeps the reasoning
    const history = new History(store, C);
    await history.ready;
    expect(history.lastEntry()).toMatchObject({
      role: 'assistant',
      content: 'It is noon.',
      reasoning: 'Bob asks for the time; it is noon.',
    });
    await store.close();
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(path, { readonly: true });
    const row = db
      .prepare(
        `SELECT content, reasoning FROM messages
         WHERE participant_id = 'support'`,
      )
      .get();
    db.close();
    expect(row).toEqual({
      content: 'It is noon.',
      reasoning: 'Bob asks for the time; it is noon.',
    });
  });
});
