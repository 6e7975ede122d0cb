import { MockLanguageModelV3 } from 'ai/test';
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assemblePrompt } from 'colloquy';
import type { ConversationStore, StoredMessage } from 'colloquy';
import { SummarizerAgent, summaryPrompt } from '../../agents/summarizer-agent.js';
import {
  AGENT,
  alice,
  appendAll,
  DM,
  peer,
  self,
  STORES,
  toolUse,
  turn,
} from '../src/assemble.fixtures.js';
import { answer } from '../fixtures/model-answer.js';

/** Everything the model was sent, as one string. */
function sent(call: LanguageModelV3CallOptions | undefined): string {
  return JSON.stringify(call?.prompt ?? []);
}

const stored = (turns: ReturnType<typeof turn>[]) =>
  turns.map((t, i) => ({ ...t, sequence: i + 1 }) as StoredMessage);

describe('SummarizerAgent', () => {
  it('asks the model with the previous summary and a named transcript, and returns its text', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: answer('  Alice wants a refund; open: amount.  '),
    });
    const summarizer = new SummarizerAgent({ model });

    const summary = await summarizer.summarize({
      agentId: AGENT.id,
      agentName: AGENT.name,
      conversationId: DM,
      previousSummary: 'Alice ordered a lamp.',
      turns: stored([
        turn(alice, 'the lamp arrived broken', { conversationId: DM }),
        turn(peer, 'refund approved', { conversationId: DM }),
        turn(self, 'I will send the label', { conversationId: DM }),
      ]),
    });

    expect(summary).toBe('Alice wants a refund; open: amount.');
    const call = model.doGenerateCalls[0];
    expect(model.doGenerateCalls).toHaveLength(1);
    expect(call?.prompt[0]).toMatchObject({ role: 'system' });
    expect(sent(call)).toContain('decisions');
    expect(sent(call)).toContain('Alice ordered a lamp.');
    expect(sent(call)).toContain('Alice: the lamp arrived broken');
    expect(sent(call)).toContain('Billing (agent): refund approved');
    expect(sent(call)).toContain('Support (assistant): I will send the label');
    expect(call?.maxOutputTokens).toBe(400);
  });

  it('shows tool use in the transcript with large results clipped', () => {
    const [call, result] = toolUse('c1', 'lookup_order', { id: 7 }, 'x'.repeat(2000));
    const prompt = summaryPrompt({
      agentId: AGENT.id,
      agentName: AGENT.name,
      conversationId: DM,
      turns: stored([call, result]),
    });
    expect(prompt).toContain('(none yet)');
    expect(prompt).toContain('Support (assistant) called tool lookup_order with {"id":7}');
    expect(prompt).toMatch(/tool lookup_order returned: x{500}…$/m);
  });

  it('uses the given instructions and output limit', async () => {
    const model = new MockLanguageModelV3({ doGenerate: answer('ok') });
    const summarizer = new SummarizerAgent({
      model,
      instructions: 'Summarise in French.',
      maxOutputTokens: 50,
    });
    await summarizer.summarize({ agentId: 'a', agentName: 'A', conversationId: DM, turns: [] });
    expect(model.doGenerateCalls[0]?.prompt[0]).toEqual({
      role: 'system',
      content: 'Summarise in French.',
    });
    expect(model.doGenerateCalls[0]?.maxOutputTokens).toBe(50);
  });
});

describe.each(STORES)('SummarizerAgent with assemblePrompt on %s', (_name, open) => {
  let store: ConversationStore;
  let dispose: () => Promise<void>;
  beforeEach(() => {
    ({ store, dispose } = open());
  });
  afterEach(async () => dispose());

  it('stores the model summary and calls the model once across two assemblies', async () => {
    await appendAll(
      store,
      Array.from({ length: 12 }, (_, i) =>
        turn(i % 2 ? self : alice, `turn ${i}`, { conversationId: DM }),
      ),
    );
    const model = new MockLanguageModelV3({
      doGenerate: answer('Alice and Support talked about turns.'),
    });
    const summarizer = new SummarizerAgent({ model });
    const options = { rollingSummaryThreshold: 8 };

    await assemblePrompt(store, DM, AGENT.id, AGENT.name, options, summarizer);
    const prompt = await assemblePrompt(store, DM, AGENT.id, AGENT.name, options, summarizer);

    expect(model.doGenerateCalls).toHaveLength(1);
    expect(prompt.messages[0]).toEqual({
      role: 'system',
      content: 'Summary of earlier conversation: Alice and Support talked about turns.',
    });
    expect((await store.getSummary(DM, AGENT.id))?.content).toBe(
      'Alice and Support talked about turns.',
    );
  });
});
