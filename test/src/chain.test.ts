import { describe, expect, it } from 'vitest';
import { captureLink, compose, inboundChain, outboundChain } from '../../src/chain.js';
import type { Arriving, Interceptor, SendHook, TurnContext } from '../../src/chain.js';
import type { Channel } from '../../src/channel.js';
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

describe('the capture link', () => {
  /** An arriving turn whose commit settles as `tried` and `committed` say, noting each step. */
  function arriving(tried: Promise<string>, committed: Promise<boolean>, trace: string[]) {
    const turn = turnContext('hello').message;
    const given: Arriving<string> = {
      turn,
      commit: () => {
        trace.push('commit');
        return { tried, committed };
      },
      acknowledge: async (outcome) => void trace.push(`acknowledge ${outcome}`),
    };
    return given;
  }

  it('commits, acknowledges, and only then hands the turn on', async () => {
    // given a turn whose commit succeeds
    const trace: string[] = [];
    const turn = arriving(Promise.resolve('stored'), Promise.resolve(true), trace);
    // when it arrives
    await inboundChain.arriving(async () => void trace.push('queue'))(turn);
    // then the queue got it after its acknowledgement
    expect(trace).toEqual(['commit', 'acknowledge stored', 'queue']);
  });

  it('refuses a delivery the first try did not commit, and hands the turn on once a retry does', async () => {
    // given a turn whose first try fails and whose retry is held
    let retried!: (committed: boolean) => void;
    const trace: string[] = [];
    const committed = new Promise<boolean>((resolve) => (retried = resolve));
    const turn = arriving(Promise.resolve('buffered'), committed, trace);
    // when it arrives, the delivery is refused and the turn waits
    const arrived = compose([captureLink])(turn, async () => void trace.push('next'));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(trace).toEqual(['commit', 'acknowledge buffered']);
    // then it goes on once the retry commits it
    retried(true);
    await arrived;
    expect(trace).toEqual(['commit', 'acknowledge buffered', 'next']);
  });

  it('goes no further with a turn that is never committed here', async () => {
    const trace: string[] = [];
    // given a turn the store rejects
    const turn = arriving(Promise.resolve('rejected'), Promise.resolve(false), trace);
    // when it arrives, then the delivery is refused and nothing follows
    await compose([captureLink])(turn, async () => void trace.push('next'));
    expect(trace).toEqual(['commit', 'acknowledge rejected']);
  });
});

describe('the outbound chain', () => {
  it('ends in the outbox, which records the reply as the send hooks left it', async () => {
    // given a hook that masks e-mail addresses, and an outbox that notes what it records
    const mask: SendHook = (reply, send) =>
      send({ ...reply, content: reply.content.replace(/\S+@\S+/g, '[email]') });
    const recorded: string[] = [];
    const outbox = async (reply: NewMessage) => {
      recorded.push(reply.content);
      return reply;
    };
    const { message, channel } = turnContext('write to ann@example.com');
    // when a reply passes the chain
    const sent = await outboundChain([mask], outbox, { channel })(message);
    // then the outbox recorded only what the hook passed on
    expect(recorded).toEqual(['write to [email]']);
    expect(sent.content).toBe('write to [email]');
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
