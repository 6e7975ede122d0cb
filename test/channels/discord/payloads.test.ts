import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  MalformedEventError,
  type ChannelHandlers,
  type ColloquyError,
  type MessageDeletion,
  type NewMessage,
} from 'colloquy';
import { DiscordChannel } from 'colloquy/discord';
import { FakeDiscord, type FakeDiscordUser } from 'colloquy/testing';

// Gateway payloads as Discord documents them (MESSAGE_DELETE_BULK, sticker_items) and as
// they have been seen broken in the wild (d: null, content: null), through the real
// discord.js client against FakeDiscord's gateway.

const GUILD = '81384788765712384';
const GENERAL = '290926798999357250';
const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };

function recorder() {
  const seen = {
    messages: [] as NewMessage[],
    deletions: [] as MessageDeletion[],
    errors: [] as ColloquyError[],
  };
  const waiters = new Set<() => void>();
  const changed = () => waiters.forEach((check) => check());
  const handlers: ChannelHandlers = {
    message: async (message) => (
      seen.messages.push(message),
      changed(),
      { handled: Promise.resolve() }
    ),
    edit: async () => ({ handled: Promise.resolve() }),
    delete: async (deletion) => (
      seen.deletions.push(deletion),
      changed(),
      { handled: Promise.resolve() }
    ),
    capacity: async () => {},
    error: (error) => void (seen.errors.push(error), changed()),
  };
  const until = (condition: (s: typeof seen) => boolean): Promise<typeof seen> =>
    new Promise((resolve) => {
      const check = () => {
        if (!condition(seen)) return;
        waiters.delete(check);
        resolve(seen);
      };
      waiters.add(check);
      check();
    });
  return { handlers, seen, until };
}

describe('DiscordChannel with real gateway payloads', () => {
  let discord: FakeDiscord;
  let channel: DiscordChannel;
  let events: ReturnType<typeof recorder>;

  beforeEach(async () => {
    discord = await FakeDiscord.start();
    discord.addGuild({
      id: GUILD,
      name: 'Test Guild',
      channels: [{ id: GENERAL, name: 'general' }],
    });
    channel = new DiscordChannel({
      token: discord.token,
      clientOptions: { rest: { api: discord.restApi } },
    });
    events = recorder();
    await channel.start(events.handlers);
  });

  afterEach(async () => {
    await channel.stop();
    await discord.close();
  });

  it('records a tombstone for every message of a MESSAGE_DELETE_BULK', async () => {
    const first = discord.userMessage({ channelId: GENERAL, author: alice, content: 'spam 1' });
    const second = discord.userMessage({ channelId: GENERAL, author: alice, content: 'spam 2' });
    await events.until((s) => s.messages.length === 2);

    discord.bulkDelete({ channelId: GENERAL, messageIds: [first.id, second.id] });

    const { deletions, errors } = await events.until((s) => s.deletions.length === 2);
    expect(deletions).toMatchObject([
      { channelType: 'discord', channelId: GENERAL, messageId: first.id },
      { channelType: 'discord', channelId: GENERAL, messageId: second.id },
    ]);
    expect(errors).toEqual([]);
  });

  it('records the stickers of a sticker-only message, as attachments are', async () => {
    discord.userMessage({
      channelId: GENERAL,
      author: alice,
      content: '',
      stickers: [{ id: '749054660769218631', name: 'Wave', format_type: 3 }],
    });

    const { messages, errors } = await events.until((s) => s.messages.length === 1);
    expect(messages[0]?.content).toBe('');
    expect(messages[0]?.attachments).toEqual([
      {
        kind: 'sticker',
        name: 'Wave',
        mimeType: 'application/json',
        platformFileId: '749054660769218631',
        url: 'https://media.discordapp.net/stickers/749054660769218631.json',
      },
    ]);
    expect(errors).toEqual([]); // a sticker is content: no Message Content warning
  });

  it('reports MESSAGE_CREATE with d: null as malformed and keeps going', async () => {
    discord.dispatch('MESSAGE_CREATE', null);
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'still here' });

    const seen = await events.until((s) => s.messages.length === 1 && s.errors.length > 0);
    expect(seen.messages[0]?.content).toBe('still here');
    expect(seen.errors).toHaveLength(1);
    expect(seen.errors[0]).toBeInstanceOf(MalformedEventError);
  });

  it('reports a message with content: null and mentions: "everyone" as malformed and keeps going', async () => {
    const good = discord.userMessage({ channelId: GENERAL, author: alice, content: 'x' });
    await events.until((s) => s.messages.length === 1);
    discord.dispatch('MESSAGE_CREATE', {
      ...good,
      id: '1300000000000000001',
      content: null,
      mentions: 'everyone',
    });
    discord.userMessage({ channelId: GENERAL, author: alice, content: 'still here' });

    const seen = await events.until((s) => s.messages.length === 2 && s.errors.length > 0);
    expect(seen.messages[1]?.content).toBe('still here');
    expect(seen.errors).toHaveLength(1);
    expect(seen.errors[0]).toBeInstanceOf(MalformedEventError);
  });
});

describe('a process running DiscordChannel', () => {
  it('survives malformed gateway frames that discord.js itself cannot handle', async () => {
    const script = join(import.meta.dirname, '../../fixtures/discord-malformed.ts');
    const { code, stdout, stderr } = await run(process.execPath, ['--import', 'tsx', script]);

    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      messages: ['first', 'still here'],
      errors: ['MalformedEventError', 'MalformedEventError', 'MalformedEventError'],
    });
  }, 60_000);
});

function run(
  command: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
