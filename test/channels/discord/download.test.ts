import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PlatformError, type Bot, type ColloquyError } from 'colloquy';
import { DiscordChannel } from 'colloquy/discord';
import { FakeDiscord, type FakeDiscordUser } from 'colloquy/testing';
import { FileReadingAgent, filesIn, PNG, userTextIn } from '../../fixtures/file-reading-agent.js';
import { addGeneral, GENERAL, startDiscordBot } from './discord.fixtures.js';

const ALICE_DM = '1202570000000000001';
const BOB_DM = '1202570000000000002';
const alice: FakeDiscordUser = { id: '80351110224678912', username: 'alice', global_name: 'Alice' };
const bob: FakeDiscordUser = { id: '80351110224678913', username: 'bob', global_name: 'Bob' };

describe('an agent reads the files people post on Discord (discord.js against FakeDiscord, memory store)', () => {
  let discord: FakeDiscord;
  let agent: FileReadingAgent;
  let bot: Bot;
  let errors: ColloquyError[];

  beforeEach(async () => {
    discord = await FakeDiscord.start();
    addGeneral(discord);
    discord.addDmChannel({ id: ALICE_DM, recipient: alice });
    discord.addDmChannel({ id: BOB_DM, recipient: bob });
    agent = new FileReadingAgent();
    ({ bot, errors } = await startDiscordBot(discord, { agents: [agent] }));
  });

  afterEach(async () => {
    await bot.stop();
    await discord.close();
  });

  it('gives the model the image’s bytes and the text file’s text, from the CDN', async () => {
    discord.userMessage({
      channelId: ALICE_DM,
      author: alice,
      content: 'what is this?',
      files: [
        { name: 'dot.png', mimeType: 'image/png', content: PNG },
        { name: 'notes.md', mimeType: 'text/markdown', content: '# order 88 ships Friday' },
      ],
    });
    const [reply] = await discord.waitForPosted(1);
    expect(reply?.content).toBe('Seen.');
    const prompt = agent.lastPrompt();
    expect(filesIn(prompt)).toEqual([{ mediaType: 'image/png', bytes: PNG }]);
    expect(userTextIn(prompt)).toContain(
      `Alice: what is this? [image: dot.png, ${PNG.length} bytes]`,
    );
    expect(userTextIn(prompt)).toContain(
      '[file: notes.md, 23 bytes]\n```\n# order 88 ships Friday\n```',
    );
    expect(errors).toEqual([]);
  });

  it('answers with placeholders for a huge file, an unknown type and a file the CDN refuses', async () => {
    const message = discord.userMessage({
      channelId: ALICE_DM,
      author: alice,
      content: 'three files',
      files: [
        { name: 'scan.png', mimeType: 'image/png', size: 50_000_000 },
        { name: 'model.xyz', mimeType: 'application/x-made-up', content: 'xyz' },
        { name: 'gone.png', mimeType: 'image/png', content: PNG, refused: true },
      ],
    });
    const [reply] = await discord.waitForPosted(1);
    expect(reply?.content).toBe('Seen.');
    const prompt = agent.lastPrompt();
    expect(filesIn(prompt)).toEqual([]);
    expect(userTextIn(prompt)).toContain(
      `three files [image: scan.png, 48 MB] [file: model.xyz, 3 bytes] [image: gone.png, ${PNG.length} bytes]`,
    );
    const [huge, unknown, gone] = (message.attachments as { id: string }[]).map((file) => file.id);
    expect(discord.files.held.fetched.get(huge!)).toBeUndefined();
    expect(discord.files.held.fetched.get(unknown!)).toBeUndefined();
    expect(discord.files.held.fetched.get(gone!)).toBe(1);
    expect(agent.warnings).toEqual([expect.stringMatching(/gone\.png.*HTTP 404/)]);
  });

  it('never shows another conversation’s files, nor those of posts not addressed to it', async () => {
    discord.userMessage({
      channelId: BOB_DM,
      author: bob,
      content: 'my receipt',
      files: [{ name: 'bob.png', mimeType: 'image/png', content: PNG }],
    });
    await discord.waitForPosted(1);
    discord.userMessage({
      channelId: GENERAL,
      author: alice,
      content: 'for the team',
      files: [{ name: 'team.png', mimeType: 'image/png', content: PNG }],
    });
    discord.userMessage({
      channelId: GENERAL,
      author: alice,
      content: `<@${discord.botUser.id}> what did people share?`,
      mentions: [discord.botUser],
    });
    await discord.waitForPosted(2);
    const prompt = agent.lastPrompt();
    expect(userTextIn(prompt)).toContain('what did people share?');
    expect(filesIn(prompt)).toEqual([]);
    expect(JSON.stringify(prompt)).not.toMatch(/bob\.png|team\.png|my receipt|for the team/);
  });

  it('gives a Lottie sticker as its placeholder, fetching none of its animation', async () => {
    discord.userMessage({
      channelId: ALICE_DM,
      author: alice,
      content: 'hi',
      stickers: [{ id: '749054660769218631', name: 'Dance', format_type: 3 }],
    });
    const [reply] = await discord.waitForPosted(1);
    expect(reply?.content).toBe('Seen.');
    const prompt = agent.lastPrompt();
    expect(userTextIn(prompt)).toBe('Alice: hi [sticker: Dance]');
    expect(agent.warnings).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('fetches a file only from Discord’s CDN or the REST API’s host', async () => {
    let asked = 0;
    const elsewhere = createServer((_req, res) => {
      asked += 1;
      res.end('hello');
    }).listen(0, '127.0.0.1');
    await once(elsewhere, 'listening');
    const { port } = elsewhere.address() as AddressInfo;
    const channel = new DiscordChannel({
      token: discord.token,
      clientOptions: { rest: { api: discord.restApi } },
    });
    try {
      const fetching = channel.fetchAttachment(
        { kind: 'file', mimeType: 'text/plain', url: `http://localhost:${port}/notes.txt` },
        { maxBytes: 1024 },
      );
      await expect(fetching).rejects.toBeInstanceOf(PlatformError);
      await expect(fetching).rejects.toMatchObject({ code: 'file_not_fetchable' });
      expect(asked).toBe(0);
    } finally {
      elsewhere.close();
    }
  });
});
