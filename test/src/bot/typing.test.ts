import { describe, expect, it } from 'vitest';
import type {
  Agent,
  AgentResult,
  OutboundMessage,
  SendOptions,
  SentMessage,
  TypingIndicator,
} from 'colloquy';
import { MemoryChannel } from 'colloquy/testing';
import { startTyping } from '../../../src/bot/typing.js';
import { GatedAgent, botOn } from '../../fixtures/gated-agent.js';

const place: OutboundMessage = {
  conversationId: 'telegram:1001',
  scope: 'dm',
  channelId: '1001',
  content: '',
};

/** An indicator that logs each call and lets a test wait for the n-th one. */
function loggingIndicator(repeatMs: number, showFails = false) {
  const calls: string[] = [];
  const waiters: (() => void)[] = [];
  const log = (what: string) => {
    calls.push(what);
    for (const wake of waiters.splice(0)) wake();
  };
  const indicator: TypingIndicator = {
    repeatMs,
    show: async () => {
      log('show');
      if (showFails) throw new Error('429: Too Many Requests');
    },
    clear: async () => log('clear'),
  };
  const until = async (check: () => boolean) => {
    while (!check()) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { indicator, calls, until };
}

describe('startTyping', () => {
  it('shows the sign of life at once and again until it is stopped, then clears it once', async () => {
    const { indicator, calls, until } = loggingIndicator(5);
    const typing = startTyping(indicator, place, new AbortController().signal, () => undefined);
    await until(() => calls.length >= 3);
    expect(calls.slice(0, 3)).toEqual(['show', 'show', 'show']);
    typing.stop();
    typing.stop();
    await until(() => calls.includes('clear'));
    const shown = calls.length;
    // Several periods later nothing more was shown.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls.at(-1)).toBe('clear');
    expect(calls.filter((call) => call === 'clear')).toHaveLength(1);
    expect(calls).toHaveLength(shown);
  });

  it('stops when the bot stops', async () => {
    const { indicator, calls, until } = loggingIndicator(5);
    const stopping = new AbortController();
    startTyping(indicator, place, stopping.signal, () => undefined);
    stopping.abort();
    await until(() => calls.includes('clear'));
    expect(calls).toEqual(['show', 'clear']);
  });

  it('shows nothing for a bot already stopping or a channel without an indicator', () => {
    const { indicator, calls } = loggingIndicator(5);
    const stopped = new AbortController();
    stopped.abort();
    startTyping(indicator, place, stopped.signal, () => undefined).stop();
    startTyping(undefined, place, new AbortController().signal, () => undefined).stop();
    expect(calls).toEqual([]);
  });

  it('reports the first failure only, and goes on trying', async () => {
    const { indicator, calls, until } = loggingIndicator(5, true);
    const failures: unknown[] = [];
    const typing = startTyping(indicator, place, new AbortController().signal, (cause) =>
      failures.push(cause),
    );
    await until(() => calls.length >= 3);
    typing.stop();
    expect(failures).toHaveLength(1);
    expect(String(failures[0])).toContain('429');
  });
});

/** A channel whose indicator and sends log in one list. */
function loggingChannel() {
  const calls: string[] = [];
  class LoggingChannel extends MemoryChannel {
    readonly typing: TypingIndicator = {
      repeatMs: 60_000,
      show: async () => void calls.push('show'),
      clear: async () => void calls.push('clear'),
    };
    override async send(message: OutboundMessage, options?: SendOptions): Promise<SentMessage> {
      calls.push('send');
      return super.send(message, options);
    }
  }
  return { channel: new LoggingChannel({ scope: 'dm' }), calls };
}

describe('the sign of life in a run', () => {
  it('is taken down before a whole answer is sent, not after', async () => {
    // given an agent that answers whole
    const answer: AgentResult = { output: 'On it.' };
    const { channel, calls } = loggingChannel();
    const agent: Agent = { id: 'support-agent', name: 'support-agent', run: async () => answer };
    const bot = await botOn(channel, agent);
    try {
      // when a person writes in a DM and the agent answers
      await channel.receive('hello');
      await bot.idle();
      // then the indicator came down before the answer went out
      expect(calls).toEqual(['show', 'clear', 'send']);
    } finally {
      await bot.stop();
    }
  });

  it('is taken down when the agent fails', async () => {
    // given an agent that fails
    const { channel, calls } = loggingChannel();
    const agent: Agent = {
      id: 'support-agent',
      name: 'support-agent',
      run: async () => {
        throw new Error('the model is down');
      },
    };
    const bot = await botOn(channel, agent);
    try {
      // when a person writes in a DM
      await channel.receive('hello');
      await bot.idle();
      // then the indicator was shown and taken down, and nothing was sent
      expect(calls).toEqual(['show', 'clear']);
    } finally {
      await bot.stop();
    }
  });
});

describe('many conversations at once', () => {
  it('raises no listener warning while more than ten agents are at work', async () => {
    // given a gated agent on a channel with a typing indicator, and a warning listener
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    const { channel } = loggingChannel();
    const agent = new GatedAgent('On it.');
    const bot = await botOn(channel, agent);
    try {
      // when twelve conversations each have a turn the agent is at work on
      for (let n = 0; n < 12; n++) {
        const turn = channel.turn('hello');
        await bot.receive({ ...turn, conversationId: `${turn.conversationId}-${n}` }, channel);
      }
      await agent.started;
      await new Promise((resolve) => setTimeout(resolve, 20));
      agent.release();
      await bot.idle();
      // then Node warned about nothing (a warning is emitted on the next tick)
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((warning) => warning.name)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await bot.stop();
    }
  });
});
