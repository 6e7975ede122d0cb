import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeOpenAIServer } from 'colloquy/testing';
import { buildIfStale, startConsoleBot } from '../channels/console/bot.fixtures.js';
import { tempDirs } from '../fixtures/temp-dirs.js';

let server: FakeOpenAIServer;
const temp = tempDirs();

beforeAll(() => buildIfStale(), 180_000);
beforeEach(async () => {
  server = await new FakeOpenAIServer().start();
});
afterEach(async () => {
  await server.close();
});

describe('FakeOpenAIServer with the real AI SDK client', () => {
  const model = () => createOpenAICompatible({ name: 'fake', baseURL: server.baseURL })('m');

  it('streams scripted text over SSE', async () => {
    server.reply('streamed answer');
    const result = streamText({ model: model(), prompt: 'hi' });
    expect(await result.text).toBe('streamed answer');
    expect(server.requests[0]).toMatchObject({ stream: true, model: 'm' });
  });

  it('streams tool calls, runs the tool and streams the final text', async () => {
    server.reply({ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, 'It is 5.');
    const add = tool({
      inputSchema: jsonSchema<{ a: number; b: number }>({
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
      }),
      execute: async ({ a, b }) => a + b,
    });
    const result = streamText({
      model: model(),
      prompt: '2+3?',
      tools: { add },
      stopWhen: stepCountIs(3),
    });
    expect(await result.text).toBe('It is 5.');
    expect(server.requests[1]?.messages.at(-1)).toMatchObject({ role: 'tool', content: '5' });
  });

  it('answers with the HTTP error it was told to', async () => {
    server.reply({ status: 401, error: 'bad key' });
    await expect(generateText({ model: model(), prompt: 'hi', maxRetries: 0 })).rejects.toThrow(
      /bad key/,
    );
  });
});

describe('the console bot against an OpenAI-compatible server', () => {
  it('sends the assembled prompt, runs conversation_search, and stores the tool turns', async () => {
    // given the console bot pointed at the fake server through COLLOQUY_MODEL
    const db = join(temp.make('e2e'), 'chat.db');
    server.reply(
      'Sorry to hear that. Which order?',
      {
        toolCalls: [{ id: 'call_9', name: 'conversation_search', arguments: { query: 'broken' } }],
      },
      'You said your mug arrived broken; a refund is on its way.',
    );
    const bot = startConsoleBot({
      COLLOQUY_DB: db,
      COLLOQUY_USER_NAME: 'Ada',
      COLLOQUY_MODEL: 'openai-compatible:fake-model',
      COLLOQUY_MODEL_BASE_URL: server.baseURL,
    });

    // when Ada reports a problem and then asks what she said
    await bot.say('my mug arrived broken', 1);
    const replies = await bot.say('what did I say was wrong?', 2);
    bot.child.stdin.end();
    expect(await bot.exited).toBe(0);

    // then the model saw the instructions, the history with Ada's name, and the new turn
    expect(bot.stderr()).toContain('using openai-compatible:fake-model');
    const system = {
      role: 'system',
      content: expect.stringContaining('You are a helpful support agent'),
    };
    expect(server.requests[0]?.messages).toEqual([
      system,
      { role: 'user', content: 'Ada: my mug arrived broken' },
    ]);
    expect(server.requests[1]?.messages).toEqual([
      system,
      { role: 'user', content: 'Ada: my mug arrived broken' },
      { role: 'assistant', content: 'Sorry to hear that. Which order?' },
      { role: 'user', content: 'Ada: what did I say was wrong?' },
    ]);
    // and the search result went back to the model, which answered with it
    const toolResult = server.requests[2]?.messages.at(-1);
    expect(toolResult).toMatchObject({ role: 'tool', tool_call_id: 'call_9' });
    expect(String(toolResult?.content)).toContain('Ada: my mug arrived broken');
    expect(replies[1]).toBe('You said your mug arrived broken; a refund is on its way.');

    // and the store holds the tool call and result between the question and the answer
    const store = SqliteConversationStore.open(db);
    try {
      const turns = await store.get('console:local');
      expect(turns.map((t) => t.metadata['toolRole'] ?? t.participant.kind)).toEqual([
        'user',
        'agent',
        'user',
        'call',
        'result',
        'agent',
      ]);
      expect(turns[3]).toMatchObject({
        id: `${turns[2]?.id}:tool:0:call_9:call`,
        content: '{"query":"broken"}',
        participant: { kind: 'agent', id: 'support-agent' },
        metadata: { toolCallId: 'call_9', toolName: 'conversation_search' },
      });
      expect(turns[5]?.metadata).toMatchObject({ model: 'openai-compatible:fake-model' });
    } finally {
      await store.close();
    }
  });
});
