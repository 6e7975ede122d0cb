import type { LanguageModelV3Content, LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { jsonSchema, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { BaseAgent, Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import type { ColloquyError, NewMessage } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { MemoryChannel } from 'colloquy/testing';
import { answer, readable } from '../../fixtures/model-answer.js';

const carol = { kind: 'user' as const, id: 'memory:carol', displayName: 'Carol' };
const dave = { kind: 'user' as const, id: 'memory:dave', displayName: 'Dave' };

function lookupCall(id: string, order: string): LanguageModelV3GenerateResult {
  const content: LanguageModelV3Content[] = [
    { type: 'tool-call', toolCallId: id, toolName: 'lookup', input: JSON.stringify({ order }) },
  ];
  return { ...answer(''), content, finishReason: { unified: 'tool-calls', raw: 'tool_calls' } };
}

/** A model that answers from a script, one step at a time, and keeps every prompt. */
function scripted(steps: LanguageModelV3GenerateResult[]) {
  return new MockLanguageModelV3({
    doGenerate: async () => steps.shift() ?? answer('(no more script)'),
  });
}

const lookup = tool({
  description: 'looks an order up',
  inputSchema: jsonSchema<{ order: string }>({
    type: 'object',
    properties: { order: { type: 'string' } },
  }),
  execute: async ({ order }) => `ORDER-${order}: charged twice`,
});

class TriageAgent extends BaseAgent {
  name = 'triage-agent';
  description = 'First contact';
  instructions = 'Hand billing questions to @billing-agent.';
  override tools = { lookup };
  constructor(override model: MockLanguageModelV3) {
    super();
  }
}

class BillingAgent extends BaseAgent {
  name = 'billing-agent';
  description = 'Billing questions handed to it';
  instructions = 'Answer billing questions.';
  constructor(override model: MockLanguageModelV3) {
    super();
  }
  shouldRespond(message: NewMessage): boolean {
    return (message.metadata.mentions ?? []).includes(this.id);
  }
}

describe('a hand-off by @mention', () => {
  it("shows the new agent the turn that started it and the handing agent's tool results, and nothing else", async () => {
    // given a triage agent that looks orders up and hands billing questions on by mention
    const triage = new TriageAgent(
      scripted([
        lookupCall('c1', '12'),
        answer('Order 12 is on its way.'),
        lookupCall('c2', '4711'),
        answer('Over to @billing-agent: order 4711 was charged twice.'),
        lookupCall('c3', '55'),
        answer('Over to @billing-agent: order 55 too.'),
      ]),
    );
    const billing = new BillingAgent(
      scripted([answer('Carol, the second charge is refunded.'), answer('Refunded, Erin.')]),
    );
    const room = new MemoryChannel();
    const otherRoom = new MemoryChannel({ channelId: 'other-room' });
    const bot = new Bot({
      channels: [room, otherRoom],
      agents: [triage, billing],
      store: new InMemoryConversationStore(),
      logger: silentLogger,
    });
    const errors: ColloquyError[] = [];
    bot.catch((error) => void errors.push(error));
    await bot.start();

    // when Dave asks triage something else first, and then Carol asks a billing question
    await room.receive('@triage-agent where is order 12?', { from: dave });
    await room.receive('@triage-agent I was charged twice for order 4711', { from: carol });
    // and, in another room, triage hands another question to billing
    await otherRoom.receive('@triage-agent order 55 as well', { from: dave });
    await bot.stop();

    // then billing saw Carol's question, what triage found, and the hand-off, in order
    expect(errors).toEqual([]);
    expect(readable(billing.model.doGenerateCalls[0]!.prompt)).toEqual([
      ['system', 'Answer billing questions.'],
      ['user', 'Carol: @triage-agent I was charged twice for order 4711'],
      ['user', 'triage-agent (agent): called tool lookup with {"order":"4711"}'],
      ['user', 'triage-agent (agent): tool lookup returned: ORDER-4711: charged twice'],
      ['user', 'triage-agent (agent): Over to @billing-agent: order 4711 was charged twice.'],
    ]);
    // and in the other room, only that room's chain
    expect(readable(billing.model.doGenerateCalls[1]!.prompt)).toEqual([
      ['system', 'Answer billing questions.'],
      ['user', 'Dave: @triage-agent order 55 as well'],
      ['user', 'triage-agent (agent): called tool lookup with {"order":"55"}'],
      ['user', 'triage-agent (agent): tool lookup returned: ORDER-55: charged twice'],
      ['user', 'triage-agent (agent): Over to @billing-agent: order 55 too.'],
    ]);
    expect(room.sent.map((sent) => sent.content)).toEqual([
      'Order 12 is on its way.',
      'Over to @billing-agent: order 4711 was charged twice.',
      'Carol, the second charge is refunded.',
    ]);
  });

  it('keeps showing the chain to the new agent when the person follows up (SQLite)', async () => {
    // given a hand-off from triage to billing about Carol's question
    const triage = new TriageAgent(
      scripted([lookupCall('c1', '4711'), answer('Over to @billing-agent.')]),
    );
    const billing = new BillingAgent(
      scripted([answer('The second charge is refunded.'), answer('In three days.')]),
    );
    const room = new MemoryChannel();
    const store = SqliteConversationStore.open(':memory:');
    const bot = new Bot({
      channels: [room],
      agents: [triage, billing],
      store,
      logger: silentLogger,
    });
    await bot.start();
    await room.receive('@triage-agent I was charged twice for order 4711', { from: carol });

    // when Carol follows up with billing
    await room.receive('@billing-agent when will I see it?', { from: carol });
    await bot.stop();
    await store.close();

    // then billing's prompt still starts with the question and what triage found
    expect(readable(billing.model.doGenerateCalls[1]!.prompt)).toEqual([
      ['system', 'Answer billing questions.'],
      ['user', 'Carol: @triage-agent I was charged twice for order 4711'],
      ['user', 'triage-agent (agent): called tool lookup with {"order":"4711"}'],
      ['user', 'triage-agent (agent): tool lookup returned: ORDER-4711: charged twice'],
      ['user', 'triage-agent (agent): Over to @billing-agent.'],
      ['assistant', 'The second charge is refunded.'],
      ['user', 'Carol: @billing-agent when will I see it?'],
    ]);
  });

  it('does not hand a turn to an agent that answers the same turn itself', async () => {
    // given a triage agent whose answer names billing, on a question that names billing too
    const triage = new TriageAgent(scripted([answer('You asked @billing-agent: see below.')]));
    const billing = new BillingAgent(scripted([answer('Refunded.'), answer('Refunded again.')]));
    const room = new MemoryChannel();
    const bot = new Bot({
      channels: [room],
      agents: [triage, billing],
      store: new InMemoryConversationStore(),
      logger: silentLogger,
    });
    await bot.start();

    // when Carol names both agents
    await room.receive('@triage-agent @billing-agent I was charged twice', { from: carol });
    await bot.stop();

    // then each answers her once
    expect(room.sent.map((sent) => sent.content)).toEqual([
      'You asked @billing-agent: see below.',
      'Refunded.',
    ]);
    expect(billing.model.doGenerateCalls).toHaveLength(1);
  });
});
