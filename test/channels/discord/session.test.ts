import { afterEach, describe, expect, it } from 'vitest';
import type { ChannelHandlers, ChannelState, NewMessage } from 'colloquy';
import { DiscordChannel } from 'colloquy/discord';
import { FakeDiscord, type FakeDiscordUser } from 'colloquy/testing';

// The gateway session kept in the store across a restart: a new process RESUMEs it, Discord
// replays what it missed, and the kept sequence never runs ahead of what was handed over.

const GUILD = '81384788765712384';
const GENERAL = '290926798999357250';
const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };
const KEY = 'discord:gateway:0';

/** `ChannelState` over a Map, as the bot's store keeps it in `colloquy_state`. */
function mapState(kept = new Map<string, string>()): ChannelState & { kept: Map<string, string> } {
  return {
    kept,
    get: async (key) => kept.get(key),
    set: async (key, value) => void (value === null ? kept.delete(key) : kept.set(key, value)),
  };
}

function keptSequence(state: { kept: Map<string, string> }): number | undefined {
  const value = state.kept.get(KEY);
  return value === undefined
    ? undefined
    : (JSON.parse(value) as { session: { sequence: number } }).session.sequence;
}

/** Handlers that record each message with the kept sequence at the moment it was handed over. */
function recording(state: ChannelState) {
  const messages: { turn: NewMessage; keptWhenHanded: number | undefined }[] = [];
  const waiters = new Set<() => void>();
  const handlers: ChannelHandlers = {
    message: async (turn) => {
      messages.push({ turn, keptWhenHanded: keptSequence(state as ReturnType<typeof mapState>) });
      waiters.forEach((check) => check());
      return { handled: Promise.resolve() };
    },
    edit: async () => ({ handled: Promise.resolve() }),
    delete: async () => ({ handled: Promise.resolve() }),
    capacity: async () => {},
    error: () => {},
    state,
  };
  const until = (count: number) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (messages.length < count) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });
  return { handlers, messages, until };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('DiscordChannel keeps its gateway session in the store', () => {
  const running: DiscordChannel[] = [];
  let discord: FakeDiscord;

  afterEach(async () => {
    for (const channel of running.splice(0)) await channel.stop();
    await discord.close();
  });

  function open(): DiscordChannel {
    const channel = new DiscordChannel({
      token: discord.token,
      clientOptions: { rest: { api: discord.restApi }, waitGuildTimeout: 0 },
    });
    running.push(channel);
    return channel;
  }

  it('RESUMEs after a restart: what arrived while down is replayed and handed over once', async () => {
    discord = await FakeDiscord.start();
    discord.addGuild({
      id: GUILD,
      name: 'Test Guild',
      channels: [{ id: GENERAL, name: 'general' }],
    });

    const first = open();
    const firstState = mapState();
    const firstRun = recording(firstState);
    await first.start(firstRun.handlers);
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'one' });
    await firstRun.until(1);
    const sequenceOfOne = discord.delivered.find(
      (event) =>
        event.t === 'MESSAGE_CREATE' && (event.d as { content?: string }).content === 'one',
    )?.s;
    await until(() => keptSequence(firstState) === sequenceOfOne);

    // The process dies: what the store holds now is all the next one has.
    const afterCrash = mapState(new Map(firstState.kept));
    await first.stop();
    running.splice(0);
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'two' });
    discord.userMessage({
      channelId: GENERAL,
      author: alice,
      content: `<@${discord.botUser.id}> three`,
      mentions: [discord.botUser],
    });

    const second = open();
    const secondRun = recording(afterCrash);
    await second.start(secondRun.handlers);
    await secondRun.until(2);

    expect(discord.identifies).toHaveLength(1);
    expect(discord.resumes).toBe(1);
    expect(secondRun.messages.map((m) => m.turn.content)).toEqual([
      'two',
      `<@${discord.botUser.id}> three`,
    ]);
    // The bot user came back with the kept session (a RESUME gets no READY).
    expect(second.botIdentity).toEqual({
      id: `discord:${discord.botUser.id}`,
      username: discord.botUser.username,
      displayName: discord.botUser.global_name ?? discord.botUser.username,
    });
    // Each replayed event was handed over while the kept sequence was still behind it.
    const sequences = discord.delivered
      .filter((event) => event.t === 'MESSAGE_CREATE')
      .slice(-2)
      .map((event) => event.s);
    expect(secondRun.messages.map((m) => m.keptWhenHanded)).toEqual([sequenceOfOne, sequences[0]]);
    await until(() => keptSequence(afterCrash) === sequences[1]);
  });

  it('RESUMEs after a stop too: a stopping channel hands its session over instead of ending it', async () => {
    // given a channel that handed over one message, then stopped (no crash)
    discord = await FakeDiscord.start();
    discord.addGuild({
      id: GUILD,
      name: 'Test Guild',
      channels: [{ id: GENERAL, name: 'general' }],
    });
    const state = mapState();
    const first = open();
    const firstRun = recording(state);
    await first.start(firstRun.handlers);
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'before the restart' });
    await firstRun.until(1);
    await first.stop();
    running.splice(0);
    expect(keptSequence(state)).toBeGreaterThan(0);

    // when a message arrives while it is down, and a new process starts on the same store
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'while down' });
    const second = open();
    const secondRun = recording(state);
    await second.start(secondRun.handlers);
    await secondRun.until(1);

    // then it RESUMEd the session, and Discord replayed what it missed
    expect([discord.identifies.length, discord.resumes]).toEqual([1, 1]);
    expect(secondRun.messages.map((m) => m.turn.content)).toEqual(['while down']);
  });

  it('knows its identity from READY for events that arrive before start resolves', async () => {
    // A DM dispatched between READY and the guilds: discord.js is not ready yet.
    const early = {
      id: '1300000000000000001',
      channel_id: '1202570000000000001',
      author: alice,
      content: 'early',
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: [],
      embeds: [],
      pinned: false,
      type: 0,
      flags: 0,
    };
    discord = await FakeDiscord.start({ beforeGuilds: [{ t: 'MESSAGE_CREATE', d: early }] });
    discord.addGuild({
      id: GUILD,
      name: 'Test Guild',
      channels: [{ id: GENERAL, name: 'general' }],
    });
    const channel = open();
    const run = recording(mapState());
    const identities: unknown[] = [];
    const handOver = run.handlers.message;
    let started = false;
    run.handlers.message = (turn) => {
      identities.push({ started, identity: channel.botIdentity });
      return handOver(turn);
    };
    await channel.start(run.handlers);
    started = true;
    await run.until(1);
    expect(identities).toEqual([
      {
        started: false,
        identity: expect.objectContaining({ id: `discord:${discord.botUser.id}` }),
      },
    ]);
  });
});
