import { afterEach, describe, expect, it } from 'vitest';
import type { ChannelHandlers, ChannelState, NewMessage } from 'colloquy';
import { DiscordChannel } from 'colloquy/discord';
import { FakeDiscord, type FakeDiscordOptions, type FakeDiscordUser } from 'colloquy/testing';

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

  /** A fake Discord with one guild and its #general. */
  async function startDiscord(options?: FakeDiscordOptions): Promise<void> {
    discord = await FakeDiscord.start(options);
    discord.addGuild({
      id: GUILD,
      name: 'Test Guild',
      channels: [{ id: GENERAL, name: 'general' }],
    });
  }

  /** A first channel on `state` that was handed `content` over; it is still running. */
  async function handedOver(content: string, state = mapState()) {
    const channel = open();
    const run = recording(state);
    await channel.start(run.handlers);
    discord.userMessage({ channelId: GENERAL, author: alice, content });
    await run.until(1);
    return { channel, state };
  }

  it('keeps the sessions of two bots on one store apart: each RESUMEs its own', async () => {
    // given two bots, each with a token that names it, keeping their sessions in one store
    const tokenOf = (id: string) => `${Buffer.from(id).toString('base64')}.GhVjkw.fake`;
    const one = { id: '1100000000000000001', username: 'one', global_name: null };
    const two = { id: '1100000000000000002', username: 'two', global_name: null };
    await startDiscord({ token: tokenOf(one.id), bot: one });
    const other = await FakeDiscord.start({ token: tokenOf(two.id), bot: two });
    const state = mapState();
    const on = (fake: FakeDiscord) => {
      const channel = new DiscordChannel({
        token: fake.token,
        clientOptions: { rest: { api: fake.restApi }, waitGuildTimeout: 0 },
      });
      running.push(channel);
      return channel;
    };
    try {
      // when both connect, stop, and connect again from what the store keeps
      for (const channel of [on(discord), on(other)])
        await channel.start(recording(state).handlers);
      const first = running.map((channel) => channel.botIdentity?.id);
      for (const channel of running.splice(0)) await channel.stop();
      const again = [on(discord), on(other)];
      for (const channel of again) await channel.start(recording(state).handlers);

      // then each is its own bot both times, and each RESUMEd its own session
      expect(first).toEqual([`discord:${one.id}`, `discord:${two.id}`]);
      expect(again.map((channel) => channel.botIdentity?.id)).toEqual([
        `discord:${one.id}`,
        `discord:${two.id}`,
      ]);
      expect([discord.identifies.length, other.identifies.length]).toEqual([1, 1]);
      expect([discord.resumes, other.resumes]).toEqual([1, 1]);
    } finally {
      for (const channel of running.splice(0)) await channel.stop();
      await other.close();
    }
  });

  it('RESUMEs a session kept under the shard alone when it names the same bot', async () => {
    // given a session kept under `discord:gateway:0`, by a bot whose token names it
    const id = '1100000000000000001';
    await startDiscord({ token: `${Buffer.from(id).toString('base64')}.GhVjkw.fake` });
    const { channel: first, state } = await handedOver('one');
    await until(() => state.kept.size > 0);
    await first.stop();
    running.splice(0);
    const [named] = [...state.kept.values()];
    const unnamed = mapState(new Map([[KEY, named!]]));

    // when the bot starts on it
    const second = open();
    await second.start(recording(unnamed).handlers);

    // then it RESUMEs that session
    expect(discord.identifies).toHaveLength(1);
    expect(discord.resumes).toBe(1);
    expect(second.botIdentity?.id).toBe(`discord:${id}`);
  });

  it('RESUMEs after a restart: what arrived while down is replayed and handed over once', async () => {
    await startDiscord();

    const { channel: first, state: firstState } = await handedOver('one');
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
    await startDiscord();
    const { channel: first, state } = await handedOver('before the restart');
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

  it('RESUMEs after a restart with nothing to replay: the start resolves on RESUMED', async () => {
    // given a channel that handed over everything Discord sent, then died
    await startDiscord();
    const { channel: first, state: firstState } = await handedOver('the last one');
    const last = discord.delivered.at(-1)?.s;
    await until(() => keptSequence(firstState) === last);
    const afterCrash = mapState(new Map(firstState.kept));
    await first.stop();
    running.splice(0);

    // when a new process starts on what the store kept, and nothing happened meanwhile
    const second = open();
    const errors: unknown[] = [];
    const secondRun = recording(afterCrash);
    await second.start({ ...secondRun.handlers, error: (error) => errors.push(error) });

    // then it RESUMEd the session without a word of complaint, and goes on receiving
    expect([discord.identifies.length, discord.resumes]).toEqual([1, 1]);
    expect(errors).toEqual([]);
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'after the restart' });
    await secondRun.until(1);
    expect(secondRun.messages.map((m) => m.turn.content)).toEqual(['after the restart']);
  });

  it('identifies again when Discord no longer knows the kept session (INVALID_SESSION)', async () => {
    // given a store that keeps a session Discord has ended
    await startDiscord();
    const session = {
      sessionId: 'ended0000000000000000000000000000',
      sequence: 42,
      shardId: 0,
      shardCount: 1,
      resumeURL: discord.gatewayUrl,
    };
    const state = mapState(new Map([[KEY, JSON.stringify({ session })]]));

    // when the channel starts on it
    const channel = open();
    const run = recording(state);
    await channel.start(run.handlers);

    // then its RESUME was refused, it identified a new session and keeps that one instead
    expect([discord.identifies.length, discord.resumes, discord.invalidSessions]).toEqual([
      1, 0, 1,
    ]);
    await until(() => !state.kept.get(KEY)?.includes(session.sessionId));
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'hello again' });
    await run.until(1);
    expect(run.messages.map((m) => m.turn.content)).toEqual(['hello again']);
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
    await startDiscord({ beforeGuilds: [{ t: 'MESSAGE_CREATE', d: early }] });
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
