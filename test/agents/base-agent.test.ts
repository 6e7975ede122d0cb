import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BaseAgent, Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import type { ColloquyError, StoredMessage } from 'colloquy';
import { FakeOpenAIServer, MemoryChannel } from 'colloquy/testing';

let server: FakeOpenAIServer;
let store: InMemoryConversationStore;
let channel: MemoryChannel;
let errors: ColloquyError[];

function fakeModel() {
  return createOpenAICompatible({ name: 'fake', baseURL: server.baseURL })('fake-model');
}

class SupportAgent extends BaseAgent {
  name = 'support-agent';
  description = 'Answers questions about orders';
  instructions = 'You are a helpful support agent.';
  override model = fakeModel();
  override logger = silentLogger;
}

async function startBot(...agents: BaseAgent[]): Promise<Bot> {
  const bot = new Bot({ channels: [channel], agents, store, logger: silentLogger });
  bot.catch((error) => void errors.push(error));
  await bot.start();
  return bot;
}

const alice = { kind: 'user' as const, id: 'memory:alice', displayName: 'Alice' };
const bob = { kind: 'user' as const, id: 'memory:bob', displayName: 'Bob' };

beforeEach(async () => {
  server = await new FakeOpenAIServer().start();
  store = new InMemoryConversationStore();
  channel = new MemoryChannel();
  errors = [];
});

afterEach(async () => {
  await server.close();
});

describe('BaseAgent through the real AI SDK client', () => {
  it('sends the instructions and only the turns addressed to it, with name prefixes', async () => {
    // given a channel where Bob chats with Alice, and Alice addresses the agent twice
    server.reply('Order 42 ships tomorrow.', 'You are welcome, Alice.');
    const bot = await startBot(new SupportAgent());
    await channel.receive('anyone seen the game last night?', { from: bob });
    await channel.receive('@support-agent where is order 42?', { from: alice });
    await channel.receive('lunch at noon?', { from: bob });

    // when Alice thanks the agent
    await channel.receive('thanks @support-agent', { from: alice });
    await bot.stop();

    // then the model saw the system prompt, the earlier exchange and the new turn — not Bob's chatter
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.messages).toEqual([
      { role: 'system', content: 'You are a helpful support agent.' },
      { role: 'user', content: 'Alice: @support-agent where is order 42?' },
      { role: 'assistant', content: 'Order 42 ships tomorrow.' },
      { role: 'user', content: 'Alice: thanks @support-agent' },
    ]);
    expect(channel.sent.map((m) => m.content)).toEqual([
      'Order 42 ships tomorrow.',
      'You are welcome, Alice.',
    ]);
    expect(errors).toEqual([]);
  });

  it('offers conversation_search and recall_tool_result without a conversation parameter', async () => {
    // given an agent answering a turn
    server.reply('ok');
    const bot = await startBot(new SupportAgent());

    // when it runs
    await channel.receive('@support-agent hi', { from: alice });
    await bot.stop();

    // then the tools' schemas only take a query (and a limit) or an id
    const tools = server.requests[0]?.tools ?? [];
    const search = tools.find((t) => t.function.name === 'conversation_search')?.function;
    const recall = tools.find((t) => t.function.name === 'recall_tool_result')?.function;
    expect(search?.parameters).toMatchObject({
      properties: { query: { type: 'string' }, limit: { type: 'integer' } },
      required: ['query'],
      additionalProperties: false,
    });
    expect(Object.keys((search?.parameters as { properties: object }).properties)).toEqual([
      'query',
      'limit',
    ]);
    expect(recall?.parameters).toMatchObject({ required: ['id'], additionalProperties: false });
  });

  it('searches the conversation, stores the tool call and result as turns, then answers', async () => {
    // given an earlier exchange about a refund, and a model that searches before answering
    server.reply(
      {
        toolCalls: [{ id: 'call_1', name: 'conversation_search', arguments: { query: 'refund' } }],
      },
      'You asked about a refund for order 42.',
    );
    const bot = await startBot(new SupportAgent());
    await store.append(channel.turn('I want a refund for order 42', { from: alice }));

    // when Alice asks what she said
    const inbound = await channel.receive('@support-agent what did I ask before?', { from: alice });
    await bot.stop();

    // then the model got the search result and answered with it
    const second = server.requests[1]?.messages ?? [];
    const toolMessage = second.find((m) => m.role === 'tool');
    expect(toolMessage?.tool_call_id).toBe('call_1');
    expect(String(toolMessage?.content)).toContain('Alice: I want a refund for order 42');
    expect(channel.sent.map((m) => m.content)).toEqual(['You asked about a refund for order 42.']);

    // and the tool call and its result are turns of the conversation, before the answer
    const turns = await store.get(channel.conversationId);
    const tail = turns.slice(-3);
    expect(tail.map((t) => [t.id, t.metadata['toolRole'] ?? 'reply'])).toEqual([
      [`${inbound.id}:tool:0:call_1:call`, 'call'],
      [`${inbound.id}:tool:0:call_1:result`, 'result'],
      [`${inbound.id}:support-agent:reply`, 'reply'],
    ]);
    const [call, result] = tail as [StoredMessage, StoredMessage];
    expect(call.participant).toEqual({
      kind: 'agent',
      id: 'support-agent',
      displayName: 'support-agent',
    });
    expect(JSON.parse(call.content)).toEqual({ query: 'refund' });
    expect(call.metadata).toMatchObject({ toolCallId: 'call_1', toolName: 'conversation_search' });
    expect(result.content).toContain('I want a refund for order 42');
  });

  it('keeps every tool turn, paired right, when the server says call_0 in every step', async () => {
    // given earlier turns about a refund and a lost parcel, and a model that searches twice with one call id
    await store.append(channel.turn('I want a refund', { from: alice }));
    await store.append(channel.turn('my parcel is lost', { from: alice }));
    const search = (query: string) => ({
      toolCalls: [{ id: 'call_0', name: 'conversation_search', arguments: { query } }],
    });
    server.reply(search('refund'), search('parcel'), 'Both noted.', 'Anything else?');
    const bot = await startBot(new SupportAgent());

    // when Alice asks, and then asks again
    const inbound = await channel.receive('@support-agent what did I say?', { from: alice });
    await channel.receive('@support-agent and now?', { from: alice });
    await bot.stop();

    // then both steps' tool turns are stored under their own ids, with the model's call id
    const tools = (await store.get(channel.conversationId)).filter(
      (t) => t.metadata['toolRole'] !== undefined,
    );
    expect(tools.map((t) => [t.id, t.metadata.toolCallId])).toEqual([
      [`${inbound.id}:tool:0:call_0:call`, 'call_0'],
      [`${inbound.id}:tool:0:call_0:result`, 'call_0'],
      [`${inbound.id}:tool:1:call_0:call`, 'call_0'],
      [`${inbound.id}:tool:1:call_0:result`, 'call_0'],
    ]);

    // and the next prompt shows each call followed by its own result
    const next = server.requests[3]?.messages ?? [];
    const toolTurns = next
      .filter((m) => m.tool_calls !== undefined || m.role === 'tool')
      .map((m) =>
        m.role === 'tool'
          ? String(m.content)
          : JSON.stringify(m.tool_calls).match(/refund|parcel/)?.[0],
      );
    expect(toolTurns).toHaveLength(4);
    expect(toolTurns[0]).toBe('refund');
    expect(toolTurns[1]).toContain('I want a refund');
    expect(toolTurns[2]).toBe('parcel');
    expect(toolTurns[3]).toContain('my parcel is lost');
    expect(errors).toEqual([]);
  });

  it('records the model and its usage on the reply', async () => {
    // given a model that answers
    server.reply('hello');
    const bot = await startBot(new SupportAgent());

    // when it answers Alice
    await channel.receive('@support-agent hi', { from: alice });
    await bot.stop();

    // then the stored reply says which model wrote it and what it cost
    const reply = (await store.get(channel.conversationId)).at(-1);
    expect(reply?.metadata).toMatchObject({
      model: 'fake:fake-model',
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
    });
    expect(reply?.metadata['offline']).toBeUndefined();
  });

  it('reports a failing model as an AgentError with the conversation and keeps running', async () => {
    // given a model endpoint that fails, then recovers
    server.reply({ status: 400, error: 'model overloaded' }, 'back again');
    const bot = await startBot(new SupportAgent());

    // when two turns arrive
    await channel.receive('@support-agent first', { from: alice });
    await channel.receive('@support-agent second', { from: alice });
    await bot.stop();

    // then the first is reported, the second answered
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ name: 'AgentError', conversationId: 'memory:room' });
    expect(errors[0]?.cause).toBeInstanceOf(Error);
    expect(channel.sent.map((m) => m.content)).toEqual(['back again']);
  });

  it('defaults id to name and lets a subclass set its own', () => {
    class Named extends SupportAgent {
      override id = 'support';
    }
    expect(new SupportAgent().id).toBe('support-agent');
    expect(new Named().id).toBe('support');
  });
});
