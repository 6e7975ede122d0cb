import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import type { NewMessage } from 'colloquy';
import { ConsoleChannel } from 'colloquy/console';
import { deferred, scriptedAgent } from '../../src/bot/bot.fixtures.js';

function streams() {
  const input = new PassThrough();
  const output = new PassThrough();
  let written = '';
  output.on('data', (chunk: Buffer) => (written += chunk.toString('utf8')));
  return { input, output, written: () => written };
}

const user = { kind: 'user' as const, id: 'console:ada', displayName: 'Ada' };

describe('ConsoleChannel', () => {
  it('handles piped lines one at a time, in order, and resolves closed at the end of input', async () => {
    // given a channel on a pipe, and a handler that is slow on the first line
    const { input, output, written } = streams();
    const channel = new ConsoleChannel({ input, output, user, session: 'demo' });
    const seen: NewMessage[] = [];
    const first = deferred();
    let active = 0;
    let overlapped = false;
    await channel.start({
      message: async (message) => {
        overlapped ||= active > 0;
        active++;
        seen.push(message);
        if (seen.length === 1) await first.promise;
        await channel.send({
          conversationId: message.conversationId,
          scope: 'dm',
          channelId: 'demo',
          content: `got ${message.content}`,
        });
        active--;
        return { handled: Promise.resolve() };
      },
      edit: async () => ({ handled: Promise.resolve() }),
      delete: async () => ({ handled: Promise.resolve() }),
      capacity: async () => {},
      error: () => {},
    });

    // when three lines (one blank) arrive at once and the pipe ends
    input.end('one\n\ntwo\nthree\n');
    first.resolve();
    await channel.closed;

    // then they were handled in order, never two at a time, as DM turns of console:demo
    expect(overlapped).toBe(false);
    expect(seen.map((m) => m.content)).toEqual(['one', 'two', 'three']);
    expect(seen[0]).toMatchObject({
      conversationId: 'console:demo',
      participant: user,
      scope: 'dm',
      metadata: { channelType: 'console', channelId: 'demo', mentions: [] },
    });
    expect(new Set(seen.map((m) => m.id)).size).toBe(3);
    expect(written()).toBe('got one\ngot two\ngot three\n');
  });

  it('prints a streamed reply’s words as they come, each after the runtime recorded them', async () => {
    // given a console writing to an output that keeps what it was given
    let printed = '';
    const output = new Writable({
      write(chunk: Buffer, _encoding, done) {
        printed += chunk.toString('utf8');
        done();
      },
    });
    const channel = new ConsoleChannel({ input: new PassThrough(), output, user, session: 'demo' });
    const recorded: { shown: string; printedThen: string }[] = [];
    // when a reply is streamed to it
    const reply = channel.stream(
      { conversationId: 'console:demo', scope: 'dm', channelId: 'demo', content: '' },
      { showing: async ({ shown }) => void recorded.push({ shown, printedThen: printed }) },
    );
    reply.update('The order');
    reply.update('The order ships');
    await reply.end('The order ships tomorrow.');
    // then the words came in order, each recorded before it was printed
    expect(printed).toBe('The order ships tomorrow.\n');
    expect(recorded.at(-1)?.shown).toBe('The order ships tomorrow.');
    for (const { shown, printedThen } of recorded) {
      expect(shown.startsWith(printedThen)).toBe(true);
      expect(printedThen.length).toBeLessThan(shown.length);
    }
  });

  it('names the person after the os user and reports console:bot as its identity', () => {
    const channel = new ConsoleChannel({ input: new PassThrough(), output: new PassThrough() });
    expect(channel.user.id).toMatch(/^console:.+/);
    expect(channel.botIdentity.id).toBe('console:bot');
    expect(channel.conversationId).toBe('console:local');
  });

  it('shows a prompt on a terminal and stops reading on /quit', async () => {
    // given a bot on a terminal-mode console
    const { input, output, written } = streams();
    const channel = new ConsoleChannel({ input, output, user, terminal: true, prompt: 'you> ' });
    const store = new InMemoryConversationStore();
    const agent = scriptedAgent('echo', (m) => `echo ${m.content}`);
    const bot = new Bot({ channels: [channel], agents: [agent], store, logger: silentLogger });
    await bot.start();

    // when the person types a line, then /quit
    input.write('hi\r');
    input.write('/quit\r');
    await channel.closed;
    await bot.stop();

    // then the reply was printed between prompts, and both turns were captured
    expect(written()).toContain('you> ');
    expect(written()).toContain('echo hi\n');
    expect((await store.get('console:local')).map((t) => t.content)).toEqual(['hi', 'echo hi']);
  });

  it('resolves closed when the bot stops before the input ends', async () => {
    const { input, output } = streams();
    const channel = new ConsoleChannel({ input, output, user });
    const bot = new Bot({
      channels: [channel],
      agents: [],
      store: new InMemoryConversationStore(),
      logger: silentLogger,
    });
    await bot.start();
    await bot.stop();
    // (a `closed` that never settles fails this test by its timeout)
    await expect(channel.closed).resolves.toBeUndefined();
  });
});
