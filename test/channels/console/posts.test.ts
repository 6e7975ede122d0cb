import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { Bot, followUpTool, InMemoryConversationStore, silentLogger, StoreError } from 'colloquy';
import { ConsoleChannel } from 'colloquy/console';

describe('posts the bot starts on the console (in-memory store)', () => {
  const input = new PassThrough();
  const output = new PassThrough();
  let written = '';
  output.on('data', (chunk: Buffer) => (written += chunk.toString('utf8')));
  const store = new InMemoryConversationStore();
  const console = new ConsoleChannel({ input, output, session: 'demo' });
  const bot = new Bot({ channels: [console], agents: [], store, logger: silentLogger });

  afterEach(async () => {
    input.end();
    await bot.stop();
  });

  it('writes a post now and a scheduled one once due, each recorded as a post', async () => {
    await bot.start();
    const now = await bot.send('console:demo', 'Good morning.');
    const later = await bot.send('console:demo', 'Time for a break.', {
      at: new Date(Date.now() + 100),
    });
    expect(written).toContain('Good morning.\n');
    expect(now).toMatchObject({ status: 'sent', messageIds: [expect.any(String)] });
    expect(later).toMatchObject({ status: 'pending', messageIds: [] });
    await expect.poll(() => written, { timeout: 5000 }).toContain('Time for a break.\n');
    await bot.idle();
    const turns = await store.get('console:demo');
    expect(turns.map((t) => [t.content, t.delivery, t.metadata.origin])).toEqual([
      ['Good morning.', 'sent', 'post'],
      ['Time for a break.', 'sent', 'post'],
    ]);
    expect(await store.getPosts()).toMatchObject([{ status: 'sent' }, { status: 'sent' }]);
    await expect(bot.send('console:other', 'hi')).rejects.toThrow(
      'no channel of this bot (console) knows conversation console:other',
    );
  });
});

describe('an agent scheduling a follow-up (followUpTool)', () => {
  it('stores a post from the agent into its conversation, due in the minutes it asked', async () => {
    const input = new PassThrough();
    const store = new InMemoryConversationStore();
    const channel = new ConsoleChannel({ input, output: new PassThrough(), session: 'demo' });
    const bot = new Bot({ channels: [channel], agents: [], store, logger: silentLogger });
    await bot.start();
    const follow = followUpTool((...args) => bot.send(...args), 'console:demo', {
      id: 'support-agent',
      name: 'Support',
    });
    const before = Date.now();
    const answer = await follow.execute!(
      { text: 'Did the fix work?', inMinutes: 30 },
      { toolCallId: 'call-1', messages: [] },
    );
    const [post] = await store.getPosts();
    expect(answer).toBe(`Scheduled for ${post!.dueAt}.`);
    expect(post).toMatchObject({
      status: 'pending',
      conversationId: 'console:demo',
      message: { content: 'Did the fix work?' },
      participant: { kind: 'agent', id: 'support-agent', displayName: 'Support' },
    });
    expect(Date.parse(post!.dueAt) - before).toBeGreaterThanOrEqual(30 * 60_000);
    input.end();
    await bot.stop();
  });
});

describe('a post whose delivery meets a store failure', () => {
  it('goes out once the store answers again, while this bot still holds its claim', async () => {
    // given a store whose next read of a turn fails once (a reset connection)
    const store = new InMemoryConversationStore();
    let failNext = false;
    const getMessage = store.getMessage.bind(store);
    store.getMessage = async (...args) => {
      if (!failNext) return getMessage(...args);
      failNext = false;
      throw new StoreError('connection reset', { transient: true });
    };
    const input = new PassThrough();
    const output = new PassThrough();
    let written = '';
    output.on('data', (chunk: Buffer) => (written += chunk.toString('utf8')));
    const channel = new ConsoleChannel({ input, output, session: 'demo' });
    const bot = new Bot({ channels: [channel], agents: [], store, logger: silentLogger });
    const errors: string[] = [];
    bot.catch((error) => void errors.push(error.message));
    await bot.start();
    try {
      // when a post comes due and its delivery meets the failure
      failNext = true;
      await bot.send('console:demo', 'Your call starts now.', { at: new Date(Date.now() + 50) });

      // then the failure is reported, and the post goes out at the next look for due posts
      await expect.poll(() => written, { timeout: 5000 }).toContain('Your call starts now.\n');
      expect(errors).toContain('connection reset');
      await bot.idle();
      expect(await store.getPosts()).toMatchObject([{ status: 'sent' }]);
      expect((await store.get('console:demo')).map((turn) => turn.delivery)).toEqual(['sent']);
    } finally {
      input.end();
      await bot.stop();
    }
  });
});
