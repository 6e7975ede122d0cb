import { afterEach, describe, expect, it, vi } from 'vitest';
import { assemblePrompt, Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import type { BurstOption, NewMessage } from 'colloquy';
import { MemoryChannel } from 'colloquy/testing';
import { deferred, scriptedAgent } from './bot.fixtures.js';

const HEY = 'hey';
const QUICK = 'quick question';
const RESET = 'how do I reset my password?';

/** A DM bot whose agent records each prompt it was given; `gate` holds its first answer. */
function setup(bursts: BurstOption) {
  const store = new InMemoryConversationStore();
  const channel = new MemoryChannel({ scope: 'dm' });
  const prompts: string[][] = [];
  const started = deferred();
  const gate = deferred();
  const agent = scriptedAgent('support', async (turn, ctx) => {
    const prompt = await assemblePrompt(ctx.store, ctx.conversationId, 'support', 'support', {
      currentMessage: turn,
    });
    prompts.push(prompt.messages.map((m) => String(m.content)));
    started.resolve();
    await gate.promise;
    return `re: ${turn.content}`;
  });
  const bot = new Bot({
    channels: [channel],
    agents: [agent],
    store,
    logger: silentLogger,
    bursts,
  });
  const runs = async () =>
    (await store.getRuns({ conversationId: channel.conversationId })).map((run) => ({
      status: run.status,
      error: run.error,
    }));
  return { bot, store, channel, prompts, started, gate, runs };
}

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await stop?.();
});

describe('bursts of turns', () => {
  it('answers each turn in order with queue', async () => {
    const { bot, channel, gate, runs } = setup('queue');
    stop = () => bot.stop();
    gate.resolve();
    await bot.start();

    const sent: Promise<NewMessage>[] = [HEY, QUICK, RESET].map((text) => channel.receive(text));
    await Promise.all(sent);

    expect(channel.sent.map((m) => m.content)).toEqual([
      `re: ${HEY}`,
      `re: ${QUICK}`,
      `re: ${RESET}`,
    ]);
    expect((await runs()).map((run) => run.status)).toEqual(['answered', 'answered', 'answered']);
  });

  it('answers the greeting, then only the newest of the turns sent while busy, with latest', async () => {
    // Given an agent busy answering "hey"
    const { bot, channel, prompts, started, gate, runs } = setup('latest');
    stop = () => bot.stop();
    await bot.start();
    const hey = await channel.deliver(HEY);
    await started.promise;

    // When the person sends two more turns before it is done
    await channel.deliver(QUICK);
    const reset = await channel.deliver(RESET);
    gate.resolve();
    await reset.handled;

    // Then the newest is answered from the whole burst, in the order it was written
    expect(channel.sent.map((m) => m.content)).toEqual([`re: ${HEY}`, `re: ${RESET}`]);
    expect(prompts.at(-1)).toEqual([`Alice: ${HEY}`, `Alice: ${QUICK}`, `Alice: ${RESET}`]);
    // and every run is settled, the skipped one naming the turn that answered it
    expect(await runs()).toEqual([
      { status: 'answered', error: undefined },
      { status: 'answered', error: `answered with the later turn ${reset.message.id}` },
      { status: 'answered', error: undefined },
    ]);
    await hey.handled;
  });

  it('waits for the person to pause and answers the burst once, with debounce', async () => {
    // Given a bot that waits for a second of quiet
    const { bot, channel, prompts, gate, runs } = setup({ mode: 'debounce', quietMs: 1000 });
    stop = () => bot.stop();
    gate.resolve();
    await bot.start();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });

    // When a person types three turns 150 ms apart
    await channel.deliver(HEY);
    await vi.advanceTimersByTimeAsync(150);
    await channel.deliver(QUICK);
    await vi.advanceTimersByTimeAsync(150);
    const reset = await channel.deliver(RESET);

    // Then nothing is answered before the pause, and the burst once after it
    await vi.advanceTimersByTimeAsync(999);
    expect(channel.sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await reset.handled;
    expect(channel.sent.map((m) => m.content)).toEqual([`re: ${RESET}`]);
    expect(prompts).toEqual([[`Alice: ${HEY}`, `Alice: ${QUICK}`, `Alice: ${RESET}`]]);
    const later = `answered with the later turn ${reset.message.id}`;
    expect(await runs()).toEqual([
      { status: 'answered', error: later },
      { status: 'answered', error: later },
      { status: 'answered', error: undefined },
    ]);
  });
});
