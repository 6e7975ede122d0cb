import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LanguageModelV3Content, LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { jsonSchema, simulateReadableStream, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  assemblePrompt,
  BaseAgent,
  Bot,
  InMemoryConversationStore,
  silentLogger,
  type ColloquyError,
  type NewMessage,
} from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { MemoryChannel } from 'colloquy/testing';
import { answer } from '../fixtures/model-answer.js';

const dir = mkdtempSync(join(tmpdir(), 'colloquy-delegation-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bob = { kind: 'user' as const, id: 'memory:bob', displayName: 'Bob' };

function call(id: string, name: string, input: unknown): LanguageModelV3GenerateResult {
  const content: LanguageModelV3Content[] = [
    { type: 'tool-call', toolCallId: id, toolName: name, input: JSON.stringify(input) },
  ];
  return { ...answer(''), content, finishReason: { unified: 'tool-calls', raw: 'tool_calls' } };
}

/** A model that answers from a script, one step at a time, and keeps every prompt it got. */
function scripted(steps: LanguageModelV3GenerateResult[]) {
  const prompts: string[] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      prompts.push(JSON.stringify(options.prompt));
      return steps.shift() ?? answer('(no more script)');
    },
  });
  return { model, prompts };
}

function fixedTool(output: string) {
  return tool({
    description: 'looks something up',
    inputSchema: jsonSchema<Record<string, unknown>>({ type: 'object' }),
    execute: async () => output,
  });
}

function agentClass(name: string, model: MockLanguageModelV3, tools: Record<string, unknown>) {
  return class extends BaseAgent {
    name = name;
    description = `the ${name} agent`;
    instructions = `You are ${name}.`;
    override model = model;
    override tools = tools as BaseAgent['tools'];
  };
}

describe('delegation between agents', () => {
  afterEach(() => {
    delete process.env['COLLOQUY_HISTORY_MAX_TOKENS'];
  });

  it('shows each agent what the issue says, and SQL shows who delegated what', async () => {
    // given a planner that looks flights up, then delegates a hotel and a car to two agents
    const hotels = scripted([call('h1', 'hotel_search', {}), answer('Hotel Bellecour is booked.')]);
    const cars = scripted([call('k1', 'car_search', {}), answer('A Clio waits at the station.')]);
    const planner = scripted([
      call('p1', 'search_flights', { to: 'Lyon' }),
      call('p2', 'delegate', { agent: 'hotels', task: 'Book a hotel in Lyon for two nights' }),
      call('p3', 'delegate', { agent: 'cars', task: 'Rent a car in Lyon' }),
      answer('Flight, hotel and car are booked.'),
      answer('You are welcome.'),
    ]);
    const Hotels = agentClass('hotels', hotels.model, {
      hotel_search: fixedTool('HOTEL-RESULT-BELLECOUR'),
    });
    const Cars = agentClass('cars', cars.model, { car_search: fixedTool('CAR-RESULT-CLIO') });
    const Planner = agentClass('planner', planner.model, {
      search_flights: fixedTool('FLIGHT-RESULT-AF123'),
    });
    const plannerAgent = new Planner();
    plannerAgent.delegates = [new Hotels(), new Cars()];
    const path = join(dir, 'delegation.db');
    const store = SqliteConversationStore.open(path);
    const channel = new MemoryChannel();
    const bot = new Bot({
      channels: [channel],
      agents: [plannerAgent],
      store,
      logger: silentLogger,
    });
    const errors: ColloquyError[] = [];
    bot.catch((error) => void errors.push(error));
    await bot.start();

    // when Bob asks the planner, and then thanks it
    await channel.receive('@planner plan my trip to Lyon', { from: bob });
    await channel.receive('@planner thanks!', { from: bob });
    await bot.stop();

    // then the planner answered both turns
    expect(errors).toEqual([]);
    expect(channel.sent.map((s) => s.content)).toEqual([
      'Flight, hotel and car are booked.',
      'You are welcome.',
    ]);
    // the hotel agent saw the request, the planner's flight result, its task and its own result
    const hotelSaw = hotels.prompts.at(-1)!;
    for (const text of [
      'plan my trip to Lyon',
      'FLIGHT-RESULT-AF123',
      'Book a hotel in Lyon',
      'HOTEL-RESULT-BELLECOUR',
    ]) {
      expect(hotelSaw).toContain(text);
    }
    // the car agent saw the same, and never the hotel delegation's tool result
    const carSaw = cars.prompts.at(-1)!;
    for (const text of ['plan my trip to Lyon', 'FLIGHT-RESULT-AF123', 'CAR-RESULT-CLIO']) {
      expect(carSaw).toContain(text);
    }
    expect(carSaw).not.toContain('HOTEL-RESULT-BELLECOUR');
    expect(carSaw).not.toContain('hotels (agent)');
    // the planner's next prompt holds its delegates' tool results and answers
    const plannerSaw = planner.prompts.at(-1)!;
    for (const text of [
      'HOTEL-RESULT-BELLECOUR',
      'CAR-RESULT-CLIO',
      'Hotel Bellecour is booked.',
      'A Clio waits at the station.',
    ]) {
      expect(plannerSaw).toContain(text);
    }

    // and SQL shows who delegated what, with the answers
    const db = new Database(path, { readonly: true });
    const rows = db
      .prepare(
        `SELECT task.delegated_by, task.delegated_to, task.content AS task,
                answer.content AS answer
         FROM messages task
         JOIN messages answer
           ON answer.delegation_id = task.id
          AND json_extract(answer.metadata, '$.delegationAnswer') = 1
         WHERE task.delegated_to IS NOT NULL
         ORDER BY task.seq`,
      )
      .all();
    const tools = db
      .prepare(
        `SELECT participant_id, json_extract(metadata, '$.toolName') AS tool
         FROM messages
         WHERE delegated_by = 'planner'
           AND json_extract(metadata, '$.toolRole') = 'result'
         ORDER BY seq`,
      )
      .all();
    db.close();
    await store.close();
    expect(rows).toEqual([
      {
        delegated_by: 'planner',
        delegated_to: 'hotels',
        task: 'Book a hotel in Lyon for two nights',
        answer: 'Hotel Bellecour is booked.',
      },
      {
        delegated_by: 'planner',
        delegated_to: 'cars',
        task: 'Rent a car in Lyon',
        answer: 'A Clio waits at the station.',
      },
    ]);
    expect(tools).toEqual([
      { participant_id: 'hotels', tool: 'hotel_search' },
      { participant_id: 'cars', tool: 'car_search' },
    ]);
  });

  it('keeps the prompt defaults, and COLLOQUY_HISTORY_MAX_TOKENS overrides the budget', async () => {
    const { InMemoryConversationStore } = await import('colloquy');
    const store = new InMemoryConversationStore();
    for (let i = 0; i < 150; i++) {
      await store.append({
        id: `t${i}`,
        conversationId: 'memory:dm',
        participant: bob,
        content: `message number ${i} with a few words in it`,
        timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
        scope: 'dm',
        metadata: { channelType: 'memory', channelId: 'dm' },
      });
    }
    const byDefault = await assemblePrompt(store, 'memory:dm', 'a', 'A', { tokenBudget: 100_000 });
    expect(byDefault.turns).toHaveLength(100);
    const three = await assemblePrompt(store, 'memory:dm', 'a', 'A');
    expect(three.tokens).toBeLessThanOrEqual(3000);
    expect(three.tokens).toBeGreaterThan(1000);
    process.env['COLLOQUY_HISTORY_MAX_TOKENS'] = '200';
    const small = await assemblePrompt(store, 'memory:dm', 'a', 'A');
    expect(small.tokens).toBeLessThanOrEqual(200);
    expect(small.turns.length).toBeLessThan(three.turns.length);
    process.env['COLLOQUY_HISTORY_MAX_TOKENS'] = 'lots';
    await expect(assemblePrompt(store, 'memory:dm', 'a', 'A')).rejects.toThrow(
      /COLLOQUY_HISTORY_MAX_TOKENS/,
    );
  });

  it('never streams the delegate’s answer into the person’s live reply', async () => {
    // given a delegate that would stream its answer, and a delegator that asks it
    const internal = 'internal: budget 80 EUR';
    const budget = new MockLanguageModelV3({
      doGenerate: async () => answer(internal),
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: [
            { type: 'stream-start', warnings: [] },
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: internal },
            { type: 'text-end', id: 't' },
            {
              type: 'finish',
              finishReason: { unified: 'stop', raw: 'stop' },
              usage: answer('').usage,
            },
          ],
        }),
      }),
    });
    const Budget = agentClass('budget', budget, {});
    const front = scripted([
      call('d1', 'delegate', { agent: 'budget', task: 'what is the budget?' }),
      answer('The budget is fine.'),
    ]);
    const Front = agentClass('front', front.model, {});
    const delegate = new Budget();
    delegate.logger = silentLogger;
    const delegator = new Front();
    delegator.logger = silentLogger;
    delegator.delegates = [delegate];
    const store = new InMemoryConversationStore();
    const turn: NewMessage = {
      id: 'm1',
      scope: 'dm',
      conversationId: 'memory:dm',
      participant: bob,
      content: 'how is the budget?',
      timestamp: new Date().toISOString(),
      metadata: { channelType: 'memory', channelId: 'dm' },
    };
    await store.append(turn);
    const shown: string[] = [];

    // when the delegator answers with a live reply
    const result = await delegator.run(turn, {
      conversationId: 'memory:dm',
      store,
      aliases: ['front'],
      record: async (row) => void (await store.append(row)),
      depth: 0,
      stream: (text) => void shown.push(text),
    });

    // then the delegate answered the delegator, and the person's live reply never showed it
    expect(result.output).toBe('The budget is fine.');
    expect(front.prompts.at(-1)).toContain(internal);
    expect(shown.join('\n')).not.toContain('internal');
  });
});
