import { afterEach, describe, expect, it } from 'vitest';
import { Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import type { BotOptions, StoredMessage } from 'colloquy';
import { MemoryChannel } from 'colloquy/testing';
import { FlakyReactions, scriptedAgent } from './bot.fixtures.js';

const ROOM = 'memory:room';

describe('answerReactions: a reaction on an agent’s message as a turn for that agent', () => {
  let bot: Bot | undefined;

  afterEach(async () => {
    await bot?.stop();
  });

  /** A bot whose support agent has answered Alice once; the answer's platform id with it. */
  async function answered(
    options: Partial<BotOptions> = {},
    scope?: 'dm',
    store = new InMemoryConversationStore(),
  ) {
    const channel = new MemoryChannel(scope === undefined ? {} : { scope });
    const support = scriptedAgent('support', (turn) => `re: ${turn.content}`, { name: 'Support' });
    const agents = options.agents ?? [support];
    bot = new Bot({ channels: [channel], agents, store, logger: silentLogger, ...options });
    await bot.start();
    const asked = await channel.receive('@support refunds take how long?', {
      mentions: ['support'],
    });
    const turns = await store.get(ROOM);
    const answer = turns.find((t) => t.participant.kind === 'agent')!;
    return { store, channel, support, asked, answer, platformId: answer.metadata.messageId! };
  }

  const reactionTurns = (turns: StoredMessage[]) =>
    turns.filter((t) => t.metadata.reaction !== undefined);

  it('commits a 👎 on the answer as a turn with its run, and the agent that wrote it answers', async () => {
    // given a bot that answers reactions, and an answer of its agent
    const { store, channel, support, answer, platformId } = await answered({
      answerReactions: true,
    });

    // when Alice thumbs the answer down
    const delivery = await channel.deliverReaction(platformId, '👎');

    // then by the time it is acknowledged the turn and its pending run are stored
    const [turn] = reactionTurns(await store.get(ROOM));
    expect(turn).toMatchObject({
      participant: { kind: 'user', id: 'memory:alice' },
      content: '[reacted 👎 to Support: "re: @support refunds take how long?"]',
      metadata: {
        reaction: { emoji: '👎', messageId: answer.id, agentId: 'support' },
        replyToMessageId: platformId,
        replyToParticipantId: 'support',
        mentions: ['support'],
      },
    });
    expect(await store.getRuns({ messageId: turn!.id })).toHaveLength(1);
    await delivery.handled;

    // and the agent answered it, its run ended answered, the reaction recorded too
    expect(support.runs.map((t) => t.id)).toEqual([expect.any(String), turn!.id]);
    expect(channel.sent.at(-1)?.content).toBe(`re: ${turn!.content}`);
    const runs = await store.getRuns({ messageId: turn!.id });
    expect(runs.map((run) => [run.agentId, run.status])).toEqual([['support', 'answered']]);
    expect(await store.getReactions(ROOM, answer.id)).toMatchObject([{ reaction: '👎' }]);
  });

  it('answers a reaction delivered twice once, as one turn', async () => {
    const { store, channel, support, platformId } = await answered({ answerReactions: true });

    await (
      await channel.deliverReaction(platformId, '👎')
    ).handled;
    await (
      await channel.deliverReaction(platformId, '👎')
    ).handled;

    expect(reactionTurns(await store.get(ROOM))).toHaveLength(1);
    expect(support.runs).toHaveLength(2); // the question and the reaction
    expect(channel.sent).toHaveLength(2);
  });

  it('only records a reaction when the option is off, removed, by a bot, or on a person’s turn', async () => {
    // given a bot that answers reactions, and one that does not
    const off = await answered();
    await (
      await off.channel.deliverReaction(off.platformId, '👎')
    ).handled;
    expect(await off.store.getReactions(ROOM, off.answer.id)).toHaveLength(1);
    await bot!.stop();

    const on = await answered({ answerReactions: true });
    const { channel, platformId, asked } = on;
    // when a reaction is taken back, a bot reacts, the bot itself reacts, or Alice's own turn gets one
    await (
      await channel.deliverReaction(platformId, '👎', { removed: true })
    ).handled;
    await (
      await channel.deliverReaction(platformId, '👎', { by: 'memory:otterbot', byBot: true })
    ).handled;
    await (
      await channel.deliverReaction(platformId, '👀', { by: 'memory:bot' })
    ).handled;
    await (
      await channel.deliverReaction(asked.metadata.messageId!, '👎', { by: 'memory:bob' })
    ).handled;

    // then no turn is added and no agent runs again
    for (const { store, support, channel: c } of [off, on]) {
      expect(reactionTurns(await store.get(ROOM))).toEqual([]);
      expect(support.runs).toHaveLength(1);
      expect(c.sent).toHaveLength(1);
    }
    expect(await on.store.getReactions(ROOM, on.asked.id)).toHaveLength(1);
  });

  it('answers only the emoji listed', async () => {
    const { store, channel, platformId } = await answered({ answerReactions: { emoji: ['👎'] } });

    await (
      await channel.deliverReaction(platformId, '👍')
    ).handled;
    expect(reactionTurns(await store.get(ROOM))).toEqual([]);
    await (
      await channel.deliverReaction(platformId, '👎')
    ).handled;
    expect(reactionTurns(await store.get(ROOM)).map((t) => t.metadata.reaction)).toMatchObject([
      { emoji: '👎' },
    ]);
  });

  it('records and answers a reaction the store fails for a passing reason, once it is back', async () => {
    // given a store that fails the next reaction it records, as a busy database does
    const store = new FlakyReactions();
    const { channel, support, answer, platformId } = await answered(
      { answerReactions: true },
      undefined,
      store,
    );
    store.failing = 1;

    // when Alice's 👎 arrives during the blip, which the delivery reports
    await expect(channel.deliverReaction(platformId, '👎')).rejects.toMatchObject({
      transient: true,
    });

    // then capture commits it once the store is back, with no delivery again, and its turn
    // is committed and answered by the agent that wrote the message
    await expect.poll(() => support.runs.length).toBe(2);
    await bot!.idle();
    const [turn] = reactionTurns(await store.get(ROOM));
    expect(turn?.metadata.reaction).toMatchObject({ emoji: '👎', messageId: answer.id });
    expect(await store.getReactions(ROOM, answer.id)).toMatchObject([{ reaction: '👎' }]);
    expect(channel.sent.at(-1)?.content).toBe(`re: ${turn!.content}`);
    expect(store.failing).toBe(0);
  });

  it('answers a listed emoji with any skin tone, and records the name the platform gave', async () => {
    // given a bot that answers 👎 (Discord, Telegram) and -1 (Slack)
    const { store, channel, answer, platformId } = await answered({
      answerReactions: { emoji: ['👎', '-1'] },
    });

    // when Alice reacts with a toned 👎 and, as Slack names it, a toned -1
    for (const emoji of ['👎🏽', '-1::skin-tone-3']) {
      await (
        await channel.deliverReaction(platformId, emoji)
      ).handled;
    }

    // then both are answered, each turn and record keeping the full name
    const turns = reactionTurns(await store.get(ROOM));
    expect(turns.map((t) => (t.metadata.reaction as { emoji: string }).emoji)).toEqual([
      '👎🏽',
      '-1::skin-tone-3',
    ]);
    const recorded = await store.getReactions(ROOM, answer.id);
    expect(recorded.map((r) => r.reaction).sort()).toEqual(['-1::skin-tone-3', '👎🏽'].sort());
  });

  it('is answered by the agent that wrote the message alone, even in a DM', async () => {
    // given two agents in a DM, where every turn concerns both, and the support agent's answer
    const support = scriptedAgent('support', (turn) => `re: ${turn.content}`, { name: 'Support' });
    const billing = scriptedAgent('billing', () => 'billing here');
    const { store, channel, platformId } = await answered(
      { answerReactions: true, agents: [support, billing] },
      'dm',
    );
    const before = billing.runs.length;

    // when Alice reacts to the support agent's answer
    await (
      await channel.deliverReaction(platformId, '👎')
    ).handled;

    // then only the support agent answers it
    const [turn] = reactionTurns(await store.get(ROOM));
    expect(support.runs.at(-1)?.id).toBe(turn!.id);
    expect(billing.runs).toHaveLength(before);
  });
});
