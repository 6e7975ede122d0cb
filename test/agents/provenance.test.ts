import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { jsonSchema, tool } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BaseAgent, Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import { FakeOpenAIServer, MemoryChannel } from 'colloquy/testing';

let server: FakeOpenAIServer;

/** An agent with a retrieval tool that returns passages with where they came from. */
class KnowledgeAgent extends BaseAgent {
  name = 'support-agent';
  description = 'Answers from the knowledge base';
  instructions = 'Look things up before answering.';
  override model = createOpenAICompatible({ name: 'fake', baseURL: server.baseURL })('m');
  override logger = silentLogger;
  override tools = {
    lookup: tool({
      description: 'Finds passages in the knowledge base',
      inputSchema: jsonSchema<{ query: string }>({
        type: 'object',
        properties: { query: { type: 'string' } },
      }),
      execute: async () => ({
        passages: ['Refunds take five working days.'],
        sources: [
          { documentId: 'kb/refunds.md', name: 'Refund policy', chunk: 3, score: 0.82 },
          { documentId: 'kb/refunds.md', chunk: 3 }, // the same passage again: kept once
          { name: 'no document id' }, // not a source: ignored
        ],
      }),
    }),
  };
}

beforeEach(async () => {
  server = await new FakeOpenAIServer().start();
});
afterEach(async () => {
  await server.close();
});

describe('provenance of an agent’s reply', () => {
  it('stores the model response id as traceId and the tool’s sources on the reply', async () => {
    // given an agent whose model looks something up, then answers
    server.reply(
      { toolCalls: [{ id: 'call_1', name: 'lookup', arguments: { query: 'refund' } }] },
      'Refunds take five working days.',
    );
    const store = new InMemoryConversationStore();
    const channel = new MemoryChannel();
    const bot = new Bot({
      channels: [channel],
      agents: [new KnowledgeAgent()],
      store,
      logger: silentLogger,
    });
    await bot.start();

    // when someone asks
    await channel.receive('@support-agent how long do refunds take?');
    await bot.stop();

    // then the reply carries the response id and the sources, and the question neither
    const turns = await store.get(channel.conversationId);
    const reply = turns.find((t) => t.content === 'Refunds take five working days.');
    expect(reply?.traceId).toBe('chatcmpl-fake');
    expect(reply?.sources).toEqual([
      { documentId: 'kb/refunds.md', name: 'Refund policy', chunk: '3', score: 0.82 },
    ]);
    const question = turns.find((t) => t.content.includes('how long'));
    expect(question).not.toHaveProperty('traceId');
    expect(question).not.toHaveProperty('sources');
  });
});
