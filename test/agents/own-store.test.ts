import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { assemblePrompt, Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import type { ColloquyError, ConversationStore } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { MemoryChannel } from 'colloquy/testing';
import { scriptedAgent } from '../src/bot/bot.fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'colloquy-own-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const alice = { kind: 'user' as const, id: 'memory:alice', displayName: 'Alice' };

/**
 * A bot on a file-backed SQLite store whose one agent reads the store `own` picks, and writes
 * down, for each turn, the texts of the prompt it assembled.
 */
async function exchange(own: (botStore: SqliteConversationStore) => ConversationStore) {
  const botStore = SqliteConversationStore.open(join(dir, `own-${++files}.db`));
  const prompts: string[][] = [];
  const agent = scriptedAgent('support-agent', async (message, ctx) => {
    const prompt = await assemblePrompt(ctx.store, ctx.conversationId, 'support-agent', 'Support', {
      currentMessage: message,
    });
    prompts.push(prompt.turns.map((turn) => turn.content));
    return `answer to ${message.content}`;
  });
  agent.conversationHistory = own(botStore);
  const channel = new MemoryChannel({ scope: 'dm' });
  const bot = new Bot({
    channels: [channel],
    agents: [agent],
    store: botStore,
    logger: silentLogger,
  });
  const errors: ColloquyError[] = [];
  bot.catch((error) => void errors.push(error));
  await bot.start();
  for (let i = 1; i <= 10; i++) await channel.receive(`question ${i}`, { from: alice });
  await bot.stop();
  await botStore.close();
  return { prompts, errors, own: agent.conversationHistory };
}

describe('an agent reading a store other than the bot view', () => {
  it('sees the previous exchange in a store of its own', async () => {
    // given an agent with its own bounded in-memory store, on a bot with a SQLite file
    const { prompts, errors, own } = await exchange(
      () => new InMemoryConversationStore({ maxMessagesPerConversation: 200 }),
    );
    // then every prompt after the first holds the previous question and answer
    expect(errors).toEqual([]);
    expect(prompts).toHaveLength(10);
    for (let i = 2; i <= 10; i++) {
      expect(prompts[i - 1]!.slice(-3)).toEqual([
        `question ${i - 1}`,
        `answer to question ${i - 1}`,
        `question ${i}`,
      ]);
    }
    // and its own store holds the whole conversation
    expect(await own!.get('memory:room')).toHaveLength(20);
  });

  it("sees the previous exchange when given the bot's own store object", async () => {
    const { prompts, errors } = await exchange((botStore) => botStore);
    expect(errors).toEqual([]);
    expect(prompts).toHaveLength(10);
    for (let i = 2; i <= 10; i++) {
      expect(prompts[i - 1]!.slice(-3)).toEqual([
        `question ${i - 1}`,
        `answer to question ${i - 1}`,
        `question ${i}`,
      ]);
    }
  });
});
