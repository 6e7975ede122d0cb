import { describe, expect, it } from 'vitest';
import { compose, type Interceptor } from '../../src/chain.js';
import type { Channel } from '../../src/channel.js';
import type { TurnContext } from '../../src/chain.js';
import { InMemoryConversationStore } from '../../src/memory-store.js';
import type { NewMessage } from '../../src/types.js';

describe('compose', () => {
  it('runs interceptors in order, unwinding in reverse', async () => {
    // given three interceptors that note when they enter and leave
    const trace: string[] = [];
    const noting =
      (name: string): Interceptor =>
      async (_ctx, next) => {
        trace.push(`>${name}`);
        await next();
        trace.push(`<${name}`);
      };
    // when the chain runs
    await compose([noting('a'), noting('b'), noting('c')])({}, async () => {
      trace.push('end');
    });
    // then they ran onion-style and the final next ran last
    expect(trace).toEqual(['>a', '>b', '>c', 'end', '<c', '<b', '<a']);
  });

  it('rejects a second call to next()', async () => {
    const twice: Interceptor = async (_ctx, next) => {
      await next();
      await next();
    };
    await expect(compose([twice])({}, async () => {})).rejects.toThrow(/more than once/);
  });

  it('lets an interceptor stop the chain by not calling next()', async () => {
    const ran: string[] = [];
    const stop: Interceptor = async () => {
      ran.push('stop');
    };
    const after: Interceptor = async (_ctx, next) => {
      ran.push('after');
      await next();
    };
    await compose([stop, after])({}, async () => {
      ran.push('end');
    });
    expect(ran).toEqual(['stop']);
  });

  it('passes an error thrown deep in the chain to the caller, through earlier interceptors', async () => {
    const seen: unknown[] = [];
    const watch: Interceptor = async (_ctx, next) => {
      try {
        await next();
      } catch (error) {
        seen.push(error);
        throw error;
      }
    };
    const boom: Interceptor = async () => {
      throw new Error('boom');
    };
    await expect(compose([watch, boom])({}, async () => {})).rejects.toThrow('boom');
    expect(seen).toHaveLength(1);
  });

  it('runs the final next when there are no interceptors', async () => {
    let ended = false;
    await compose([])({}, async () => {
      ended = true;
    });
    expect(ended).toBe(true);
  });

  it('lets typed context fields flow from one interceptor to the next', async () => {
    // given a turn context widened with a field that one interceptor sets
    type Ctx = TurnContext & { x: number };
    const seen: string[] = [];
    const plain: Interceptor<TurnContext> = async (ctx, next) => {
      seen.push(ctx.message.content);
      await next();
    };
    const setX: Interceptor<Ctx> = async (ctx, next) => {
      ctx.x = ctx.message.content.length;
      await next();
    };
    const readX: Interceptor<Ctx> = async (ctx, next) => {
      seen.push(`x=${ctx.x.toFixed(0)}`);
      await next();
    };
    // @ts-expect-error a field the context type does not declare is a compile error
    const _undeclared: Interceptor<Ctx> = async (ctx) => void ctx.y;
    // when a chain mixes plain and widened interceptors
    await compose<Ctx>([plain, setX, readX])({ ...turnContext('hello'), x: 0 }, async () => {});
    // then the later interceptor saw the typed field
    expect(seen).toEqual(['hello', 'x=5']);
  });
});

function turnContext(content: string): TurnContext {
  const channel: Channel = {
    type: 'console',
    botIdentity: { id: 'console:bot' },
    start: async () => {},
    stop: async () => {},
    send: async () => ({ messageIds: ['1'] }),
  };
  const message: NewMessage = {
    id: 'console:1',
    conversationId: 'console:main',
    participant: { kind: 'user', id: 'console:alice' },
    content,
    timestamp: '2026-01-01T00:00:00.000Z',
    scope: 'dm',
    metadata: { channelType: 'console', channelId: 'main', mentions: [] },
  };
  return {
    message,
    channel,
    store: new InMemoryConversationStore(),
    send: async (text, from) => ({ ...message, id: 'console:2', content: text, participant: from }),
    depth: 0,
    identities: [],
  };
}
