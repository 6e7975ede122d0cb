import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assemblePrompt, ColloquyError } from 'colloquy';
import type { Agent } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import type { SlackChannel } from 'colloquy/slack';
import { FakeSlack } from 'colloquy/testing';
import { newRun } from '../../../src/bot/records.js';
import { crashImageOnSend } from '../../fixtures/crash-image.js';
import { ScriptedAgent } from '../../fixtures/scripted-agent.js';
import { startedBot } from '../../fixtures/started-bot.js';
import { tempDirs } from '../../fixtures/temp-dirs.js';
import { watched } from '../../fixtures/watched-store.js';
import {
  leaveAsACrashBeforeConfirming,
  PostBots,
  scheduledPostSurvivesRestart,
} from '../posts.fixtures.js';
import { slackChannelOn } from './slack.fixtures.js';

const temp = tempDirs();
const inGeneral = 'slack:T0FAKE:C0GENERAL';

describe('posts the bot starts on Slack (Bolt against FakeSlack, SQLite file)', () => {
  let slack: FakeSlack;
  let path: string;
  let bots: PostBots<SlackChannel>;

  beforeEach(async () => {
    slack = await FakeSlack.start();
    slack.addUser('U0ALICE', 'alice');
    path = join(temp.make('slack-posts'), 'bot.db');
    const started = (channel: SlackChannel) => void (slack.eventsUrl = channel.eventsUrl);
    bots = new PostBots(path, () => slackChannelOn(slack), started);
  });

  afterEach(async () => {
    await bots.stopAll();
    await slack.close();
  });

  const startBot = () => bots.start();

  it('posts into a channel with the post id as its reply key, recorded sent as a post', async () => {
    const { bot, store } = await startBot();
    const receipt = await bot.send(inGeneral, 'Deploy finished.');
    const [posted] = slack.posted;
    expect(posted).toMatchObject({
      channel: 'C0GENERAL',
      text: 'Deploy finished.',
      metadata: { event_type: 'colloquy_reply', event_payload: { reply_id: receipt.id } },
    });
    expect(await store.getMessage(inGeneral, receipt.id)).toMatchObject({
      delivery: 'sent',
      scope: 'channel',
      metadata: { origin: 'post', messageId: posted!.ts },
    });
    expect(bots.errors).toEqual([]);
  });

  it('opens a DM with conversations.open and posts into it', async () => {
    const { bot, store } = await startBot();
    const dm = await bot.openDm('slack', 'U0ALICE');
    expect(dm).toBe('slack:T0FAKE:D0ALICE');
    const receipt = await bot.send(dm, 'Your report is ready.');
    expect(slack.calls.map((call) => call.method)).toContain('conversations.open');
    expect(slack.posted).toMatchObject([{ channel: 'D0ALICE', text: 'Your report is ready.' }]);
    expect(await store.getMessage(dm, receipt.id)).toMatchObject({ scope: 'dm', delivery: 'sent' });
    await expect(bot.openDm('slack', 'U0NOBODY')).rejects.toThrow('user_not_found');
  });

  it('posts an ephemeral message with chat.postEphemeral, recorded as shown to one person', async () => {
    const { bot, store } = await startBot();
    const thread = `${inGeneral}:1700000000.000100`;
    const receipt = await bot.send(thread, { content: 'Only you see this.', visibleTo: 'U0ALICE' });
    expect(slack.posted).toMatchObject([
      { channel: 'C0GENERAL', thread_ts: '1700000000.000100', visibleTo: 'U0ALICE' },
    ]);
    expect(slack.posted[0]).not.toHaveProperty('metadata');
    expect(await store.getMessage(thread, receipt.id)).toMatchObject({
      delivery: 'sent',
      scope: 'thread',
      metadata: { origin: 'post', visibleTo: 'U0ALICE', threadId: '1700000000.000100' },
    });
  });

  it("leaves an agent's ephemeral post out of its prompt answering someone else, and keeps it answering that person", async () => {
    slack.addUser('U0BOB', 'bob');
    const { bot, store } = await startBot();
    await bot.send(
      inGeneral,
      {
        content: 'Only you see this: your reset code is 4242',
        visibleTo: 'U0ALICE',
      },
      { from: { id: 'support' } },
    );
    await slack.message({
      channel: 'C0GENERAL',
      user: 'U0BOB',
      text: 'support, what did you say?',
    });
    await slack.message({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'support, say it again' });
    await bot.idle();
    const turns = await store.get(inGeneral);
    const by = (user: string) => turns.find((t) => t.participant.id === `slack:${user}`)!;
    const prompt = async (user: string) =>
      JSON.stringify(
        (await assemblePrompt(store, inGeneral, 'support', 'support', { currentMessage: by(user) }))
          .messages,
      );
    expect(await prompt('U0BOB')).not.toContain('4242');
    expect(await prompt('U0ALICE')).toContain('4242');
  });

  it('settles a post a crash left sending by its metadata, without posting it twice', async () => {
    const first = await startBot();
    const receipt = await first.bot.send(inGeneral, 'Standup in 5 minutes');
    await bots.stop(first);
    leaveAsACrashBeforeConfirming(path);

    const second = await startBot();
    await second.bot.idle();

    expect(slack.posted).toHaveLength(1);
    expect(await second.store.getMessage(inGeneral, receipt.id)).toMatchObject({
      delivery: 'sent',
      metadata: { messageId: slack.posted[0]!.ts },
    });
    expect(await second.store.getPosts()).toMatchObject([{ status: 'sent' }]);
    expect(bots.errors).toEqual([]);
  });

  it('sends a post that came due while the bot was stopped when a new bot starts', async () => {
    await scheduledPostSurvivesRestart(bots, inGeneral, () =>
      slack.posted.map((message) => ({ text: message.text, id: message.ts })),
    );
  });
});

describe('a bot in two Slack workspaces', () => {
  it('reacts to a turn, and posts into its conversation, through the workspace it belongs to', async () => {
    const one = await FakeSlack.start();
    const two = await FakeSlack.start({ teamId: 'T0TWO' });
    const sqlite = new SqliteConversationStore({ path: ':memory:' });
    const store = watched(sqlite);
    const channels = [one, two].map((slack) => slackChannelOn(slack));
    const { bot, errors } = await startedBot(channels, { store: store.store });
    try {
      one.eventsUrl = channels[0]!.eventsUrl;
      two.eventsUrl = channels[1]!.eventsUrl;
      two.addUser('U0ALICE', 'alice');
      const inTwo = 'slack:T0TWO:C0GENERAL';
      const { event } = await two.message({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'hi' });
      const [turn] = await store.turns(inTwo, (t) => t.length === 1);

      await bot.react(inTwo, turn!.id, 'eyes');
      await bot.send(inTwo, 'Welcome.');

      expect(two.reactions).toMatchObject([
        { channel: 'C0GENERAL', timestamp: event.ts, name: 'eyes' },
      ]);
      expect(two.posted).toMatchObject([{ channel: 'C0GENERAL', text: 'Welcome.' }]);
      expect([one.reactions, one.posted]).toEqual([[], []]);
      expect(errors).toEqual([]);
    } finally {
      await bot.stop();
      await Promise.all([one.close(), two.close(), sqlite.close()]);
    }
  });

  it('refuses a DM by platform name alone, naming both, and opens it on the workspace named', async () => {
    // given a bot in two workspaces, each with its own bot user
    const one = await FakeSlack.start({ bot: { userId: 'U0BOTONE' } });
    const two = await FakeSlack.start({ teamId: 'T0TWO', bot: { userId: 'U0BOTTWO' } });
    one.addUser('U0ALICE', 'alice');
    two.addUser('U0ALICE', 'alice');
    const channels = [one, two].map((slack) => slackChannelOn(slack));
    const { bot, errors } = await startedBot(channels);
    try {
      // when a DM is opened by 'slack', then by the second workspace's bot id and by its channel
      const byPlatform = await bot.openDm('slack', 'U0ALICE').catch((error: unknown) => error);
      const byIdentity = await bot.openDm('slack:U0BOTTWO', 'U0ALICE');
      const byChannel = await bot.openDm(channels[0]!, 'U0ALICE');
      await bot.send(byIdentity, 'Your report is ready.');

      // then 'slack' alone is refused with the choices, and the others open that workspace's DM
      expect(byPlatform).toBeInstanceOf(ColloquyError);
      expect((byPlatform as Error).message).toBe(
        '2 slack channels (slack:U0BOTONE, slack:U0BOTTWO): name one by its bot identity id, or pass the Channel',
      );
      expect([byIdentity, byChannel]).toEqual(['slack:T0TWO:D0ALICE', 'slack:T0FAKE:D0ALICE']);
      expect(two.posted).toMatchObject([{ channel: 'D0ALICE', text: 'Your report is ready.' }]);
      expect(one.posted).toEqual([]);
      await expect(bot.openDm(slackChannelOn(one), 'U0ALICE')).rejects.toThrow(
        "the slack channel given to openDm is not one of the bot's",
      );
      expect(errors).toEqual([]);
    } finally {
      await bot.stop();
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('answers a turn left pending by a stopped bot through the workspace it belongs to', async () => {
    // given a turn of the second workspace stored with a pending run, its bot stopped
    const one = await FakeSlack.start();
    const two = await FakeSlack.start({ teamId: 'T0TWO' });
    two.addUser('U0ALICE', 'alice');
    const path = join(temp.make('slack-workspaces'), 'bot.db');
    const inTwo = 'slack:T0TWO:C0GENERAL';
    try {
      const first = new SqliteConversationStore({ path });
      const firstChannels = [one, two].map((slack) => slackChannelOn(slack));
      const { bot: stopped } = await startedBot(firstChannels, { store: first });
      two.eventsUrl = firstChannels[1]!.eventsUrl;
      await two.message({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'hi' });
      await stopped.idle();
      const [turn] = await first.get(inTwo);
      const run = newRun(turn!, 'files-agent', new Date().toISOString());
      await first.commit([{ kind: 'run', run, create: true }]);
      await stopped.stop();
      await first.close();

      // when a bot in both workspaces starts on that database with the agent
      const store = new SqliteConversationStore({ path });
      const channels = [one, two].map((slack) => slackChannelOn(slack));
      const agents = [new ScriptedAgent({ output: 'Hello again.' })];
      const { bot, errors } = await startedBot(channels, { store, agents });
      try {
        await expect.poll(() => two.posted.map((posted) => posted.text)).toEqual(['Hello again.']);

        // then the answer went out in the turn's own workspace, and nowhere else
        await bot.idle();
        expect(one.posted).toEqual([]);
        expect(errors).toEqual([]);
        expect((await store.getRuns!({ messageId: turn!.id })).map((r) => r.status)).toEqual([
          'answered',
        ]);
      } finally {
        await bot.stop();
        await store.close();
      }
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});

describe('two Slack bots in one workspace', () => {
  let one: FakeSlack;
  let two: FakeSlack;
  let path: string;
  const running: { stop(): Promise<void> }[] = [];

  beforeEach(async () => {
    one = await FakeSlack.start({ bot: { userId: 'U0BOTONE' } });
    two = await FakeSlack.start({ bot: { userId: 'U0BOTTWO' } });
    one.addUser('U0ALICE', 'alice');
    two.addUser('U0ALICE', 'alice');
    path = join(temp.make('slack-two-bots'), 'bot.db');
  });

  afterEach(async () => {
    for (const bot of running.splice(0).reverse()) await bot.stop();
    await Promise.all([one.close(), two.close()]);
  });

  /**
   * A bot with both bots' channels on the SQLite file (`file`, else the test's), answering with
   * `agents`, receiving both bots' events, stopped after the test.
   */
  async function startBot(agents: Agent[] = [], file = path) {
    const store = new SqliteConversationStore({ path: file });
    const channels = [one, two].map((slack) => slackChannelOn(slack));
    const started = await startedBot(channels, { store, agents });
    running.push({ stop: () => started.bot.stop().then(() => store.close()) });
    one.eventsUrl = channels[0]!.eventsUrl;
    two.eventsUrl = channels[1]!.eventsUrl;
    return { ...started, store, channels };
  }

  /** Stops the bot started last. */
  const stopLast = () => running.pop()!.stop();

  it('answers a turn bot two received, left pending by a stopped bot, through bot two', async () => {
    // given a turn bot two received, stored with a pending run, the bot stopped before answering
    const first = await startBot();
    await two.message({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'hi' });
    await first.bot.idle();
    const [turn] = await first.store.get(inGeneral);
    expect(turn!.metadata.via).toBe('slack:U0BOTTWO');
    const run = newRun(turn!, 'files-agent', new Date().toISOString());
    await first.store.commit([{ kind: 'run', run, create: true }]);
    await stopLast();

    // when a bot with both bots starts on that database with the agent
    const second = await startBot([new ScriptedAgent({ output: 'Hello again.' })]);
    await expect.poll(() => two.posted.map((posted) => posted.text)).toEqual(['Hello again.']);
    await second.bot.idle();

    // then the answer went out through bot two, and nothing through bot one
    expect(one.posted).toEqual([]);
    expect(one.calls.map((call) => call.method)).not.toContain('chat.postMessage');
    expect((await second.store.getRuns!({ messageId: turn!.id })).map((r) => r.status)).toEqual([
      'answered',
    ]);
    expect([...first.errors, ...second.errors]).toEqual([]);
  });

  it('reacts to a turn bot two received through bot two', async () => {
    const { bot, store, errors } = await startBot();
    const { event } = await two.message({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'hi' });
    await bot.idle();
    const [turn] = await store.get(inGeneral);

    await bot.react(inGeneral, turn!.id, 'eyes');

    expect(two.reactions).toMatchObject([
      { channel: 'C0GENERAL', timestamp: event.ts, name: 'eyes' },
    ]);
    expect(one.reactions).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('settles a reply bot two left sending at a crash through bot two, posting it once', async () => {
    // given bot two's reply to a mention, posted by Slack, the process killed before confirming
    const first = await startBot([new ScriptedAgent({ output: 'On it.' })]);
    const image = join(temp.make('slack-two-bots-crash'), 'crashed.db');
    const crashed = crashImageOnSend(first.channels[1]!, first.store, image, 'after the call');
    await two.mention({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'where is my order?' });
    await crashed;
    await first.bot.idle();
    await stopLast();

    // when a bot with both bots starts on the file the crash left
    const second = await startBot([new ScriptedAgent({ output: 'a second answer' })], image);
    await second.bot.idle();
    await second.bot.settled();

    // then bot two found its reply and it is recorded sent; nothing went out through bot one
    expect(two.posted.map((posted) => posted.text)).toEqual(['On it.']);
    expect(one.posted).toEqual([]);
    const [run] = await second.store.getRuns!({ conversationId: inGeneral });
    const reply = await second.store.getMessage(run!.reply!.conversationId, run!.replyId!);
    expect(reply).toMatchObject({
      delivery: 'sent',
      metadata: { messageId: two.posted[0]!.ts, via: 'slack:U0BOTTWO' },
    });
    expect(run!.status).toBe('answered');
  });

  it('posts into a DM both bots know through the bot `via` names, and refuses it without, naming both', async () => {
    const { bot, errors } = await startBot();
    const dm = await bot.openDm('slack:U0BOTTWO', 'U0ALICE');

    const unnamed = await bot.send(dm, 'Your report is ready.').catch((error: unknown) => error);
    await bot.send(dm, 'Your report is ready.', { via: 'slack:U0BOTTWO' });

    expect((unnamed as Error).message).toBe(
      `2 slack channels know conversation ${dm} (slack:U0BOTONE, slack:U0BOTTWO): name one with { via }`,
    );
    expect(two.posted).toMatchObject([{ channel: 'D0ALICE', text: 'Your report is ready.' }]);
    expect(one.posted).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('sends a post that came due while the bot was stopped through the bot it was sent via', async () => {
    const first = await startBot();
    const dm = await first.bot.openDm('slack:U0BOTTWO', 'U0ALICE');
    const at = new Date(Date.now() + 200);
    await first.bot.send(dm, 'Did the fix work?', { via: 'slack:U0BOTTWO', at });
    await stopLast();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, at.getTime() - Date.now())));

    const second = await startBot();
    await second.bot.idle();

    expect(two.posted).toMatchObject([{ channel: 'D0ALICE', text: 'Did the fix work?' }]);
    expect(one.posted).toEqual([]);
    expect(await second.store.getPosts()).toMatchObject([{ status: 'sent' }]);
    expect([...first.errors, ...second.errors]).toEqual([]);
  });

  it('refuses a post from an agent into a conversation both bots know, since it keeps no channel', async () => {
    const { bot } = await startBot();

    const sent = bot.send(inGeneral, 'Deploy finished.', {
      via: 'slack:U0BOTTWO',
      from: { id: 'support', name: 'Support' },
    });

    await expect(sent).rejects.toThrow(
      `2 slack channels know conversation ${inGeneral} (slack:U0BOTONE, slack:U0BOTTWO): name one with { via }; a post from an agent (from) keeps no channel, so it cannot be sent there`,
    );
    expect([one.posted, two.posted]).toEqual([[], []]);
  });
});
