import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot, ColloquyError } from 'colloquy';
import { FakeSlack } from 'colloquy/testing';
import { FileReadingAgent, filesIn, PNG, userTextIn } from '../../fixtures/file-reading-agent.js';
import { startSlackBot } from './slack.fixtures.js';

describe('an agent reads the files people share on Slack (Bolt against FakeSlack, memory store)', () => {
  let slack: FakeSlack;
  let agent: FileReadingAgent;
  let bot: Bot;
  let errors: ColloquyError[];

  beforeEach(async () => {
    slack = await FakeSlack.start();
    slack.addUser('U0ALICE', 'alice');
    slack.addUser('U0BOB', 'bob');
    agent = new FileReadingAgent();
    ({ bot, errors } = await startSlackBot(slack, { agents: [agent] }));
  });

  afterEach(async () => {
    await bot.stop();
    await slack.close();
  });

  it('gives the model the image’s bytes and the text file’s text, fetched with the bot token', async () => {
    await slack.fileShare({
      channel: 'D0ALICE',
      user: 'U0ALICE',
      text: 'what is this?',
      files: [
        { name: 'dot.png', mimeType: 'image/png', content: PNG },
        { name: 'notes.txt', mimeType: 'text/plain', content: 'order 88 ships Friday' },
      ],
    });
    const [reply] = await slack.waitForPosted(1);
    expect(reply?.text).toBe('Seen.');
    const prompt = agent.lastPrompt();
    expect(filesIn(prompt)).toEqual([{ mediaType: 'image/png', bytes: PNG }]);
    expect(userTextIn(prompt)).toContain(
      `alice: what is this? [image: dot.png, ${PNG.length} bytes]`,
    );
    expect(userTextIn(prompt)).toContain(
      '[file: notes.txt, 21 bytes]\n```\norder 88 ships Friday\n```',
    );
    expect(errors).toEqual([]);
  });

  it('answers with placeholders for a huge file, an unknown type and a file Slack refuses', async () => {
    const { event } = await slack.fileShare({
      channel: 'D0ALICE',
      user: 'U0ALICE',
      text: 'three files',
      files: [
        { name: 'scan.png', mimeType: 'image/png', size: 50_000_000 },
        { name: 'model.xyz', mimeType: 'application/x-made-up', content: 'xyz' },
        { name: 'gone.png', mimeType: 'image/png', content: PNG, refused: true },
      ],
    });
    const [reply] = await slack.waitForPosted(1);
    expect(reply?.text).toBe('Seen.');
    const prompt = agent.lastPrompt();
    expect(filesIn(prompt)).toEqual([]);
    expect(userTextIn(prompt)).toContain(
      `three files [image: scan.png, 48 MB] [file: model.xyz, 3 bytes] [image: gone.png, ${PNG.length} bytes]`,
    );
    const [huge, unknown, gone] = (event.files as { id: string }[]).map((file) => file.id);
    expect(slack.files.held.fetched.get(huge!)).toBeUndefined();
    expect(slack.files.held.fetched.get(unknown!)).toBeUndefined();
    expect(slack.files.held.fetched.get(gone!)).toBe(1);
    expect(agent.warnings).toEqual([expect.stringMatching(/gone\.png.*HTTP 404/)]);
  });

  it('never shows another conversation’s files, nor those of turns not addressed to it', async () => {
    await slack.fileShare({
      channel: 'D0BOB',
      user: 'U0BOB',
      text: 'my receipt',
      files: [{ name: 'bob.png', mimeType: 'image/png', content: PNG }],
    });
    await slack.waitForPosted(1);
    await slack.fileShare({
      channel: 'C0GENERAL',
      user: 'U0ALICE',
      text: 'for the team',
      files: [{ name: 'team.png', mimeType: 'image/png', content: PNG }],
    });
    await slack.mention({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'what did people share?' });
    await slack.waitForPosted(2);
    const prompt = agent.lastPrompt();
    expect(userTextIn(prompt)).toContain('what did people share?');
    expect(filesIn(prompt)).toEqual([]);
    expect(JSON.stringify(prompt)).not.toMatch(/bob\.png|team\.png|my receipt|for the team/);
  });
});
