import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import {
  assemblePrompt,
  BaseAgent,
  Bot,
  History,
  InMemoryConversationStore,
  PluginError,
  recallToolResultTool,
  rollingCompression,
  silentLogger,
  toolResultMasking,
  defaultTokenizer,
  type ColloquyError,
  type HistoryEntryInput,
  type HistoryPlugin,
  type SummarizeInput,
  type Summarizer,
} from 'colloquy';
import { maskedToolResultNote, SUMMARY_PREFIX } from '../../../src/assemble.js';
import { MemoryChannel } from 'colloquy/testing';
import { answer } from '../../fixtures/model-answer.js';

const C = 'memory:room';
const agent = { kind: 'agent' as const, id: 'support', displayName: 'Support' };
const bob = { kind: 'user' as const, id: 'memory:bob', displayName: 'Bob' };
const big = (word: string) => `${word} `.repeat(300).trim();

let clock = 0;
function at(): string {
  return new Date(Date.UTC(2026, 0, 1) + ++clock * 1000).toISOString();
}

/** An agent's tool call and its result, as entries. */
function toolUse(callId: string, name: string, output: string): HistoryEntryInput[] {
  return [
    {
      role: 'assistant',
      id: `${callId}:call`,
      participant: agent,
      timestamp: at(),
      content: '',
      calls: [{ id: callId, name, arguments: {} }],
    },
    {
      role: 'tool',
      id: callId,
      messageId: `${callId}:result`,
      participant: agent,
      timestamp: at(),
      name,
      content: output,
    },
  ];
}

const ask = (content: string): HistoryEntryInput => ({
  role: 'user',
  participant: bob,
  timestamp: at(),
  content,
});

/** A store holding: an old big result, a big excluded one, a small one, the newest big one. */
async function toolHistory() {
  const history = new History(new InMemoryConversationStore(), C);
  await history.restore([
    ask('look everything up'),
    ...toolUse('c1', 'lookup', big('alpha')),
    ...toolUse('c2', 'get_weather', big('sunny')),
    ...toolUse('c3', 'lookup', 'tiny'),
    ...toolUse('c4', 'lookup', big('omega')),
  ]);
  return history;
}

function toolOutputs(messages: Awaited<ReturnType<typeof assemblePrompt>>['messages']) {
  const out: Record<string, string> = {};
  for (const message of messages) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type === 'tool-result' && part.output.type === 'text') {
        out[part.toolCallId] = part.output.value;
      }
    }
  }
  return out;
}

/** A summarizer that writes down what it was asked to fold. */
function countingSummarizer(): Summarizer & { calls: SummarizeInput[] } {
  const calls: SummarizeInput[] = [];
  return {
    calls,
    summarize: async (input) => {
      calls.push(input);
      return `summary of ${input.turns.length} turns`;
    },
  };
}

describe('tool-result masking plugin', () => {
  it('masks older large results, leaving small and excluded ones a keep-recent slot free', async () => {
    // given four tool results, one slot kept in full, a 50-token floor and get_weather excluded
    const history = await toolHistory();
    const masking = toolResultMasking({
      keepRecent: 1,
      minTokensToMask: 50,
      exclude: ['get_weather'],
    });
    // when the agent's prompt is assembled with it
    const prompt = await assemblePrompt(history.store, C, 'support', 'Support', {
      plugins: [masking],
      tokenBudget: 10_000,
    });
    // then only the old large lookup is masked: the small and excluded ones took no slot
    const alphaTokens = defaultTokenizer.count(big('alpha'));
    expect(toolOutputs(prompt.messages)).toEqual({
      c1: maskedToolResultNote('c1:result', alphaTokens),
      c2: big('sunny'),
      c3: 'tiny',
      c4: big('omega'),
    });
    // and the retrieve tool reads the masked result back in full; the store kept it
    const recall = recallToolResultTool(history.store, C, 'support');
    const read = await recall.execute!({ id: 'c1:result' }, { toolCallId: 'x', messages: [] });
    expect(read).toBe(big('alpha'));
    expect(masking.retrieveTool).toBe('recall_tool_result');
  });

  it('masks only the tools an include list names', async () => {
    const history = await toolHistory();
    const masking = toolResultMasking({
      keepRecent: 0,
      minTokensToMask: 50,
      include: ['get_weather'],
    });
    const prompt = await assemblePrompt(history.store, C, 'support', 'Support', {
      plugins: [masking],
      tokenBudget: 10_000,
    });
    const outputs = toolOutputs(prompt.messages);
    expect(outputs.c2).toMatch(/^\[tool result masked/);
    expect([outputs.c1, outputs.c3, outputs.c4]).toEqual([big('alpha'), 'tiny', big('omega')]);
  });

  it('refuses include and exclude together, in one line', () => {
    const both = () => toolResultMasking({ include: ['lookup'], exclude: ['get_weather'] });
    expect(both).toThrow(RangeError);
    expect(both).toThrow(/^toolResultMasking: give include .* or exclude .*, not both$/);
  });

  it('masks in a History view, lossless: the snapshot keeps every result', async () => {
    const history = await toolHistory();
    history.use(toolResultMasking({ keepRecent: 1, minTokensToMask: 50 }));
    const view = await history.view();
    const tools = view.filter((e) => e.role === 'tool').map((e) => e.content.slice(0, 20));
    expect(tools).toEqual([
      '[tool result masked:',
      '[tool result masked:',
      'tiny',
      big('omega').slice(0, 20),
    ]);
    expect(history.getToolResult('c1')?.content).toBe(big('alpha'));
  });
});

describe('rolling compression plugin', () => {
  async function turns(n: number) {
    const history = new History(new InMemoryConversationStore(), C);
    const entries: HistoryEntryInput[] = [];
    for (let i = 1; i <= n; i++) {
      entries.push(
        i % 2 === 1
          ? ask(`question ${i}`)
          : { role: 'assistant', participant: agent, timestamp: at(), content: `answer ${i}` },
      );
    }
    await history.restore(entries);
    return history;
  }

  it('summarises past maxEntries, keeps the newest verbatim, and reuses the stored summary', async () => {
    // given ten turns and compression past six entries, keeping two
    const history = await turns(10);
    const summarizer = countingSummarizer();
    const plugins = [rollingCompression({ summarizer, maxEntries: 6, keepRecent: 2 })];
    // when the agent's prompt is assembled twice
    const first = await assemblePrompt(history.store, C, 'support', 'Support', { plugins });
    const second = await assemblePrompt(history.store, C, 'support', 'Support', { plugins });
    // then eight turns were folded once, into a stored summary both prompts start with
    expect(summarizer.calls.map((c) => c.turns.length)).toEqual([8]);
    for (const prompt of [first, second]) {
      expect(prompt.summary?.content).toBe('summary of 8 turns');
      expect(prompt.turns.map((t) => t.content)).toEqual(['question 9', 'answer 10']);
    }
    expect((await history.store.getSummary(C, 'support'))?.content).toBe('summary of 8 turns');
  });

  it('summarises past maxTokens', async () => {
    const history = await turns(10);
    const summarizer = countingSummarizer();
    const plugins = [rollingCompression({ summarizer, maxTokens: 30, keepRecent: 4 })];
    const prompt = await assemblePrompt(history.store, C, 'support', 'Support', { plugins });
    expect(summarizer.calls.map((c) => c.turns.length)).toEqual([6]);
    expect(prompt.turns).toHaveLength(4);
  });

  it('summarises what is older than olderThan minutes, and nothing when nothing is', async () => {
    const history = await turns(6);
    const summarizer = countingSummarizer();
    const plugins = [rollingCompression({ summarizer, olderThan: 60, keepRecent: 0 })];
    const now = (minutes: number) => () => new Date(Date.UTC(2026, 0, 1) + minutes * 60_000);
    await assemblePrompt(history.store, C, 'support', 'Support', { plugins, now: now(1) });
    expect(summarizer.calls).toEqual([]);
    const later = await assemblePrompt(history.store, C, 'support', 'Support', {
      plugins,
      now: now(24 * 60),
    });
    expect(summarizer.calls.map((c) => c.turns.length)).toEqual([6]);
    expect(later.turns).toEqual([]);
  });

  it('reduces a History by hand, whatever the triggers say', async () => {
    // given a history well under its trigger
    const history = await turns(6);
    const summarizer = countingSummarizer();
    history.use(rollingCompression({ summarizer, maxEntries: 100, keepRecent: 2 }));
    expect((await history.view()).map((e) => e.content)).toHaveLength(6);
    // when it is reduced by hand
    const view = await history.reduce();
    // then the view starts with the summary and keeps the newest two; the snapshot keeps all
    expect(view.map((e) => e.content)).toEqual([
      `${SUMMARY_PREFIX}summary of 4 turns`,
      'question 5',
      'answer 6',
    ]);
    expect(history.length).toBe(6);
  });
});

describe('plugin hooks', () => {
  it('runs onRegistered once on use, and afterAdd for every entry that comes in', async () => {
    // given a plugin that writes down what it is told, on an agent and on a history
    const told: string[] = [];
    const watcher: HistoryPlugin = {
      name: 'watcher',
      onRegistered: (ctx) => void told.push(`registered ${ctx.agentId ?? ctx.conversationId}`),
      afterAdd: (entry) => void told.push(`${entry.role}: ${entry.content}`),
    };
    class Support extends BaseAgent {
      name = 'support';
      description = 'answers';
      instructions = 'Answer.';
    }
    new Support().use(watcher);
    const history = new History(new InMemoryConversationStore(), C).use(watcher);
    // when entries come in
    await history.restore([ask('one'), ask('two')]);
    // then it heard of its registration and of each entry, in order
    expect(told).toEqual(['registered support', `registered ${C}`, 'user: one', 'user: two']);
  });
});

describe('a plugin that throws', () => {
  const broken: HistoryPlugin = {
    name: 'broken',
    afterAdd: () => {
      throw new Error('afterAdd exploded');
    },
    transform: () => {
      throw new Error('transform exploded');
    },
  };

  it('is reported and the turn is still answered', async () => {
    // given an agent with a plugin that throws in every hook
    const prompts: unknown[] = [];
    class Support extends BaseAgent {
      name = 'support';
      description = 'answers';
      instructions = 'Answer.';
      override model = new MockLanguageModelV3({
        doGenerate: async (options) => {
          prompts.push(options.prompt);
          return answer('still here');
        },
      });
    }
    const channel = new MemoryChannel({ scope: 'dm' });
    const bot = new Bot({
      channels: [channel],
      agents: [new Support().use(broken)],
      store: new InMemoryConversationStore(),
      logger: silentLogger,
    });
    const errors: ColloquyError[] = [];
    bot.catch((error) => void errors.push(error));
    await bot.start();
    // when a person writes
    await channel.receive('hello?', { from: bob });
    await bot.stop();
    // then the turn was answered, and both failures were reported naming the plugin
    expect(channel.sent.map((s) => s.content)).toEqual(['still here']);
    expect(prompts).toHaveLength(1);
    expect(errors.every((e) => e instanceof PluginError)).toBe(true);
    expect(errors.map((e) => [(e as PluginError).plugin, (e as PluginError).hook])).toEqual([
      ['broken', 'afterAdd'],
      ['broken', 'transform'],
    ]);
    expect(errors[1]?.conversationId).toBe(C);
  });

  it('on a History is told as pluginError, and the view still comes', async () => {
    const history = new History(new InMemoryConversationStore(), C);
    const reported: ColloquyError[] = [];
    history.on('pluginError', (error) => void reported.push(error));
    history.use(broken);
    await history.restore([ask('hi')]);
    expect((await history.view()).map((e) => e.content)).toEqual(['hi']);
    expect(reported.map((e) => e.message)).toEqual([
      'plugin broken failed in afterAdd: afterAdd exploded',
      'plugin broken failed in transform: transform exploded',
    ]);
  });
});
