import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot, ColloquyError, Logger } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeDiscord, type FakeDiscordUser } from 'colloquy/testing';
import { watched } from '../../fixtures/watched-store.js';
import { addGeneral, GENERAL, GUILD, startDiscordBot } from './discord.fixtures.js';

const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };
const bob: FakeDiscordUser = { id: '80351110224678913', username: 'bob' };
const inGeneral = `discord:${GUILD}:${GENERAL}`;

describe('reactions on Discord (discord.js against FakeDiscord, SQLite store)', () => {
  let discord: FakeDiscord;
  let sqlite: SqliteConversationStore;
  let db: ReturnType<typeof watched>;
  let bot: Bot;
  let errors: ColloquyError[];
  let lines: string[];

  beforeEach(async () => {
    discord = await FakeDiscord.start();
    addGeneral(discord);
    sqlite = new SqliteConversationStore({ path: ':memory:' });
    db = watched(sqlite);
    lines = [];
    const line = (message: string) => void lines.push(message);
    const logger: Logger = { debug: () => {}, info: line, warn: line, error: line };
    ({ bot, errors } = await startDiscordBot(discord, { store: db.store, logger }));
  });

  afterEach(async () => {
    await bot.stop();
    await discord.close();
    await sqlite.close();
  });

  it('asks for reaction intents and records reactions added and removed, as no turn', async () => {
    const message = discord.userMessage({ channelId: GENERAL, author: alice, content: 'ok?' });
    const [turn] = await db.turns(inGeneral, (t) => t.length === 1);
    const thumbsUp = { id: null, name: '👍' };
    expect(discord.react({ messageId: message.id, user: bob, emoji: thumbsUp })).toBe(true);
    discord.react({ messageId: message.id, user: bob, emoji: thumbsUp, removed: true });
    discord.react({
      messageId: message.id,
      user: bob,
      emoji: { id: '41771983429993937', name: 'party' },
    });
    // The next message is committed after the reactions, which the channel handles in order.
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'thanks' });
    await db.turns(inGeneral, (t) => t.length === 2);
    await expect
      .poll(() => sqlite.getReactions(inGeneral, turn!.id))
      .toMatchObject([
        { participantId: `discord:${bob.id}`, reaction: '👍', removedAt: expect.any(String) },
        { participantId: `discord:${bob.id}`, reaction: 'party' },
      ]);
    expect(errors).toEqual([]);
  });

  it('leaves out a reaction on a message it never saw with one line, and keeps going', async () => {
    const unknown = '1100000000000000001';
    // As the gateway sends it for a message posted before the bot ran.
    discord.dispatch('MESSAGE_REACTION_ADD', {
      user_id: bob.id,
      channel_id: GENERAL,
      message_id: unknown,
      guild_id: GUILD,
      emoji: { id: null, name: '🔥' },
      message_author_id: alice.id,
      burst: false,
      type: 0,
    });
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'still here' });
    await db.turns(inGeneral, (t) => t.length === 1);
    await expect
      .poll(() => lines.filter((line) => line.includes('reaction')))
      .toEqual([
        `not recorded: reaction 🔥 on a message the store does not have (discord:${GENERAL}:${unknown})`,
      ]);
    expect(errors).toEqual([]);
  });
});
