import { describe, expect, it } from 'vitest';
import { Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import type { ColloquyError, SendHook } from 'colloquy';
import { MemoryChannel } from 'colloquy/testing';
import { scriptedAgent } from './bot.fixtures.js';

/** A bot whose agent answers every turn with `answer`, its replies passing `hooks`. */
async function setup(hooks: SendHook[], answer = 'write to ann@example.com') {
  const store = new InMemoryConversationStore();
  const channel = new MemoryChannel();
  const errors: ColloquyError[] = [];
  const agent = scriptedAgent('support-agent', () => answer, { shouldRespond: () => true });
  const bot = new Bot({
    channels: [channel],
    agents: [agent],
    store,
    logger: silentLogger,
    sendHooks: hooks,
  });
  bot.catch((error) => void errors.push(error));
  await bot.start();
  const stored = async () => (await store.get(channel.conversationId)).map((t) => t.content);
  const runs = async () => (await store.getRuns({ conversationId: channel.conversationId })) ?? [];
  return { bot, channel, store, errors, stored, runs };
}

describe('send hooks', () => {
  it('change a reply before it is recorded and posted, so the record is what was sent', async () => {
    // given a hook that masks e-mail addresses
    const mask: SendHook = (reply, send) =>
      send({ ...reply, content: reply.content.replace(/\S+@\S+/g, '[email]') });
    const { bot, channel, stored, runs } = await setup([mask]);

    // when the agent answers with one
    await channel.receive('how do I reach billing?');
    await bot.stop();

    // then the platform got the masked text, the store recorded it, and the run was answered
    expect(channel.sent.map((m) => m.content)).toEqual(['write to [email]']);
    expect(await stored()).toEqual(['how do I reach billing?', 'write to [email]']);
    expect((await runs()).map((run) => run.status)).toEqual(['answered']);
  });

  it('run in order, the first outermost, and see the reply as sent', async () => {
    // given two hooks that note what they see
    const seen: string[] = [];
    const outer: SendHook = async (reply, send, { inbound }) => {
      seen.push(`outer before: ${reply.content} (answering ${inbound?.content})`);
      const sent = await send({ ...reply, content: `${reply.content}!` });
      seen.push(`outer after: ${sent.metadata.messageId ?? 'no id'}`);
      return sent;
    };
    const inner: SendHook = async (reply, send, { channel }) => {
      seen.push(`inner before: ${reply.content} on ${channel.type}`);
      return send(reply);
    };
    const { bot, channel } = await setup([outer, inner], 'hi');

    // when a turn is answered
    await channel.receive('hello');
    await bot.stop();

    // then the outer hook saw the reply first and the platform's id last
    expect(seen).toEqual([
      'outer before: hi (answering hello)',
      'inner before: hi! on memory',
      'outer after: out-2',
    ]);
    expect(channel.sent.map((m) => m.content)).toEqual(['hi!']);
  });

  it('refuse a reply by throwing: nothing is recorded or posted, and the run fails', async () => {
    // given a hook that refuses every reply
    const refuse: SendHook = async () => {
      throw new Error('replies are paused');
    };
    const { bot, channel, errors, stored, runs } = await setup([refuse]);

    // when a turn is answered
    await channel.receive('anyone there?');
    await bot.stop();

    // then nothing went out or into the record, and the run failed with the hook's error
    expect(channel.sent).toEqual([]);
    expect(await stored()).toEqual(['anyone there?']);
    expect(await runs()).toMatchObject([{ status: 'failed', error: 'replies are paused' }]);
    expect(errors.map((e) => e.message).join('\n')).toContain('replies are paused');
  });

  it('may not change which reply it is', async () => {
    // given a hook that renames the reply
    const rename: SendHook = (reply, send) => send({ ...reply, id: 'something-else' });
    const { bot, channel, stored, runs } = await setup([rename]);

    // when a turn is answered
    await channel.receive('hello');
    await bot.stop();

    // then it is refused as a hook's mistake, and nothing went out
    expect(channel.sent).toEqual([]);
    expect(await stored()).toEqual(['hello']);
    expect(await runs()).toMatchObject([
      { status: 'failed', error: "a send hook changed a reply's id or conversation" },
    ]);
  });
});
