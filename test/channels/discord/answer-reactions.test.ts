import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot, BotOptions, ColloquyError, ConversationStore } from 'colloquy';
import { StoreError } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeDiscord, type FakeDiscordUser } from 'colloquy/testing';
import {
  APOLOGY,
  ANSWER,
  FeedbackAgent,
  expectReactionAnswered,
} from '../../fixtures/feedback-agent.js';
import { addGeneral, GENERAL, GUILD, startDiscordBot } from './discord.fixtures.js';

const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };
const ciBot: FakeDiscordUser = { id: '80351110224678999', username: 'ci', bot: true };
const inGeneral = `discord:${GUILD}:${GENERAL}`;
const thumbsDown = { id: null, name: '👎' };

describe('answerReactions on Discord (discord.js against FakeDiscord, SQLite store)', () => {
  let discord: FakeDiscord;
  let sqlite: SqliteConversationStore;
  let bot: Bot;
  let errors: ColloquyError[];
  let agent: FeedbackAgent;

  beforeEach(async () => {
    discord = await FakeDiscord.start();
    addGeneral(discord);
    sqlite = new SqliteConversationStore({ path: ':memory:' });
    agent = new FeedbackAgent();
  });

  afterEach(async () => {
    await bot.stop();
    await discord.close();
    await sqlite.close();
  });

  /** A bot with `options` whose agent has answered Alice's mention: her message and the answer. */
  async function answered(options: Partial<BotOptions>) {
    ({ bot, errors } = await startDiscordBot(discord, {
      store: sqlite,
      agents: [agent],
      ...options,
    }));
    const asked = discord.userMessage({
      channelId: GENERAL,
      author: alice,
      content: `<@${discord.botUser.id}> refund time?`,
      mentions: [discord.botUser],
    });
    const [answer] = await discord.waitForPosted(1);
    await bot.idle();
    return { asked, answer: answer! };
  }

  /**
   * Resolves once every event so far is handled: a message Alice writes to no one after them
   * (the channel hands events over in order) is stored, and the bot is idle.
   */
  async function settled(turns: number): Promise<void> {
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'ok' });
    await expect.poll(async () => (await sqlite.get(inGeneral)).length).toBe(turns);
    await bot.idle();
  }

  const reactionTurns = async () =>
    (await sqlite.get(inGeneral)).filter((t) => t.metadata.reaction !== undefined);

  it('answers a 👎 on the agent’s answer, with the reaction turn and the answer recorded', async () => {
    const { answer } = await answered({ answerReactions: { emoji: ['👎'] } });

    discord.react({ messageId: answer.id, user: alice, emoji: thumbsDown });
    await discord.waitForPosted(2);
    await settled(5);

    expect(discord.posted.map((m) => m.content)).toEqual([ANSWER, APOLOGY]);
    const turns = await sqlite.get(inGeneral);
    expect(turns.map((t) => t.content).slice(-1)).toEqual(['ok']);
    await expectReactionAnswered(sqlite, inGeneral, {
      emoji: '👎',
      by: `discord:${alice.id}`,
      displayName: 'Alice',
    });
    expect(errors).toEqual([]);
  });

  it('answers a reaction the gateway delivers twice once', async () => {
    const { answer } = await answered({ answerReactions: true });

    discord.react({ messageId: answer.id, user: alice, emoji: thumbsDown });
    discord.replayLastEvents(1); // the reaction again
    await discord.waitForPosted(2);
    await settled(5);

    expect(await reactionTurns()).toHaveLength(1);
    expect(discord.posted.map((m) => m.content)).toEqual([ANSWER, APOLOGY]);
    expect(agent.calls).toBe(2);
    expect(errors).toEqual([]);
  });

  it('records and answers a 👎 that meets a passing store failure, which Discord does not deliver again', async () => {
    // given a store that fails the next write of a reaction, as SQLITE_BUSY does
    const store = flaky(sqlite);
    const { answer } = await answered({ answerReactions: true, store });
    store.failing = 1;

    // when Alice's 👎 arrives during the blip
    discord.react({ messageId: answer.id, user: alice, emoji: thumbsDown });

    // then the channel reports it, capture commits it once the store is back, and it is answered
    await discord.waitForPosted(2);
    await settled(5);
    // (reported by capture, which tries it again, and by the channel, which cannot take it back)
    expect(new Set(errors.map((e) => e.message))).toEqual(
      new Set(['cannot record a reaction: SQLITE_BUSY']),
    );
    expect(discord.posted.map((m) => m.content)).toEqual([ANSWER, APOLOGY]);
    await expectReactionAnswered(sqlite, inGeneral, {
      emoji: '👎',
      by: `discord:${alice.id}`,
      displayName: 'Alice',
    });
  });

  it('only records a reaction when the option is off', async () => {
    const { answer } = await answered({});

    discord.react({ messageId: answer.id, user: alice, emoji: thumbsDown });
    await settled(3);

    expect(await reactionTurns()).toEqual([]);
    expect(discord.posted).toHaveLength(1);
    const [, stored] = await sqlite.get(inGeneral);
    expect(await sqlite.getReactions(inGeneral, stored!.id)).toMatchObject([{ reaction: '👎' }]);
  });

  it('starts no agent for a removal, a bot’s reaction, or one on a person’s message', async () => {
    const { asked, answer } = await answered({ answerReactions: true });

    discord.react({ messageId: answer.id, user: alice, emoji: thumbsDown, removed: true });
    discord.react({ messageId: answer.id, user: ciBot, emoji: thumbsDown });
    discord.react({ messageId: asked.id, user: alice, emoji: thumbsDown });
    await settled(3);

    expect(await reactionTurns()).toEqual([]);
    expect(discord.posted).toHaveLength(1);
    expect(agent.calls).toBe(1);
    expect(errors).toEqual([]);
  });
});

/**
 * `sqlite`, failing its next `failing` writes of a reaction (a commit that carries one, or a
 * `recordReaction`) for a passing reason.
 */
function flaky(sqlite: SqliteConversationStore): SqliteConversationStore & { failing: number } {
  const busy = () => new StoreError('cannot record a reaction: SQLITE_BUSY', { transient: true });
  const state = { failing: 0 };
  const fails = () => {
    if (state.failing === 0) return false;
    state.failing--;
    return true;
  };
  return new Proxy(sqlite, {
    get: (target, key) => {
      if (key === 'failing') return state.failing;
      if (key === 'recordReaction') {
        return async (...args: Parameters<ConversationStore['recordReaction']>) => {
          if (fails()) throw busy();
          return target.recordReaction(...args);
        };
      }
      if (key === 'commit') {
        return async (ops: Parameters<SqliteConversationStore['commit']>[0]) => {
          if (ops.some((op) => op.kind === 'reaction') && fails()) {
            return ops.map(() => ({ ok: false, error: busy() }));
          }
          return target.commit(ops);
        };
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
    set: (target, key, value) => {
      if (key !== 'failing') return Reflect.set(target, key, value, target);
      state.failing = value as number;
      return true;
    },
  }) as SqliteConversationStore & { failing: number };
}
