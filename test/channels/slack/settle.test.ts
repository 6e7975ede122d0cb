import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogLevel } from '@slack/bolt';
import { WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Bot, silentLogger } from 'colloquy';
import { SlackChannel } from 'colloquy/slack';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeSlack, type FakeSlackHeldCall } from 'colloquy/testing';
import { crashAndRestart } from '../../fixtures/crash-image.js';
import { lossyHop, type LossyHop } from '../../fixtures/lossy-hop.js';
import { PacedAgent } from '../../fixtures/paced-model.js';
import { ScriptedAgent } from '../../fixtures/scripted-agent.js';
import { startedBot, type StartedBot } from '../../fixtures/started-bot.js';

const GENERAL = 'C0GENERAL';
const DM = 'D0ALICE';

describe('Slack: a reply a crash left unconfirmed is settled by its message metadata', () => {
  let slack: FakeSlack;
  let dir: string;
  let crash: ReturnType<typeof crashAndRestart>;

  beforeEach(async () => {
    slack = await FakeSlack.start();
    dir = mkdtempSync(join(tmpdir(), 'colloquy-slack-settle-'));
    crash = crashAndRestart(
      dir,
      () =>
        new SlackChannel({
          token: slack.token,
          signingSecret: slack.signingSecret,
          port: 0,
          host: '127.0.0.1',
          logLevel: LogLevel.ERROR,
          clientOptions: { slackApiUrl: slack.slackApiUrl },
        }),
      (channel) => void (slack.eventsUrl = (channel as SlackChannel).eventsUrl),
    );
  });

  afterEach(async () => {
    await crash.stop();
    await slack.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const mention = () =>
    slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'where is my order?' });
  const methods = () => slack.calls.map((call) => call.method);

  it('finds a reply posted in a thread before the crash, and posts nothing more', async () => {
    // given a bot killed after Slack stored its threaded reply, before the answer reached it
    const { image } = await crash.whileReplying('after the call', mention);
    expect(slack.posted).toHaveLength(1);

    // when it starts again
    const settled = await crash.restartOn(image);

    // then the thread was read back, the reply recorded with the ts Slack gave it, once
    expect(slack.posted).toHaveLength(1);
    expect(methods()).toContain('conversations.replies');
    expect(settled).toMatchObject({
      delivery: 'sent',
      id: slack.posted[0]!.ts,
      status: 'answered',
    });
  });

  it('finds a reply posted in a direct message in the conversation history', async () => {
    // given a bot killed after Slack stored its answer in a DM
    const { image } = await crash.whileReplying('after the call', () =>
      slack.message({ channel: DM, user: 'U0ALICE', text: 'where is my order?' }),
    );

    // when it starts again
    const settled = await crash.restartOn(image);

    // then the DM's history had it: recorded, not posted again
    expect(slack.posted).toHaveLength(1);
    expect(methods()).toContain('conversations.history');
    expect(settled).toMatchObject({
      delivery: 'sent',
      id: slack.posted[0]!.ts,
      status: 'answered',
    });
  });

  it('posts the reply once, with its metadata, when the crash came before Slack had it', async () => {
    // given a bot killed after recording its reply, before calling Slack
    const { image } = await crash.whileReplying('before the call', mention);
    expect(slack.posted).toHaveLength(0);

    // when it starts again
    const settled = await crash.restartOn(image);

    // then the recorded reply is posted once in the thread, marked, and recorded
    expect(slack.posted.map((post) => post.text)).toEqual(['On it.']);
    expect(slack.posted[0]!.metadata).toMatchObject({
      event_type: 'colloquy_reply',
      event_payload: { part: 0 },
    });
    expect(settled).toMatchObject({
      delivery: 'sent',
      id: slack.posted[0]!.ts,
      status: 'answered',
    });
  });

  it('settles a split reply whose parts Slack stored: both recorded, neither posted twice', async () => {
    // given a two-part reply cut off after Slack stored both parts (the first confirmed)
    const long = `${'a'.repeat(3000)}\n\n${'b'.repeat(3000)}`;
    const { image } = await crash.whileReplying('after the call', mention, long);
    expect(slack.posted).toHaveLength(2);

    // when the bot starts again
    const settled = await crash.restartOn(image);

    // then both parts are recorded with their ts, neither posted twice
    expect(slack.posted).toHaveLength(2);
    expect(settled).toMatchObject({ delivery: 'sent', id: slack.posted[0]!.ts });
    expect(settled.parts).toEqual([slack.posted[1]!.ts]);
  });
});

describe('Slack: a reply streamed with Slack’s own methods is settled after a crash', () => {
  let slack: FakeSlack;
  let dir: string;
  const running: { bot: Bot; store: SqliteConversationStore; agent: PacedAgent }[] = [];
  const held: FakeSlackHeldCall[] = [];

  beforeEach(async () => {
    slack = await FakeSlack.start();
    dir = mkdtempSync(join(tmpdir(), 'colloquy-slack-settle-stream-'));
  });

  afterEach(async () => {
    for (const call of held.splice(0)) call.release();
    for (const { bot, store, agent } of running.splice(0).reverse()) {
      if (!agent.paced.finished) agent.paced.finish();
      await bot.stop();
      await store.close();
    }
    await slack.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A bot on the SQLite file `file`, answering with `agent`, started and receiving events. */
  async function botAt(file: string, agent: PacedAgent) {
    const store = new SqliteConversationStore({ path: file });
    const channel = new SlackChannel({
      token: slack.token,
      signingSecret: slack.signingSecret,
      port: 0,
      host: '127.0.0.1',
      logLevel: LogLevel.ERROR,
      clientOptions: { slackApiUrl: slack.slackApiUrl },
    });
    const bot = new Bot({ channels: [channel], agents: [agent], store, logger: silentLogger });
    running.push({ bot, store, agent });
    await bot.start();
    slack.eventsUrl = channel.eventsUrl;
    return { bot, store };
  }

  /**
   * A bot streams its answer to a mention until the call `method` arrives; the SQLite file is
   * then copied as a kill at that moment would leave it. `done`: Slack did what the call asked
   * before the kill. `recorded`: the kill waits until the record holds the stream's ts.
   */
  async function crashAt(method: string, say: string[], done: boolean, recorded = false) {
    const agent = new PacedAgent();
    const { store } = await botAt(join(dir, 'colloquy.db'), agent);
    const call = slack.holdNext(method, { done });
    held.push(call);
    await slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'where is my order?' });
    await agent.paced.started;
    for (const words of say) agent.paced.say(words);
    if (method === 'chat.stopStream') agent.paced.finish();
    await call.arrived;
    if (recorded) await vi.waitFor(() => expect(replyRow(store).id).not.toBeNull());
    const image = join(dir, 'crashed.db');
    store.db.prepare('VACUUM INTO ?').run(image);
    return image;
  }

  /** The one reply row: its delivery, its platform id, its text, and its run's status. */
  function replyRow(store: SqliteConversationStore) {
    return store.db
      .prepare(
        `SELECT m.delivery, m.platform_message_id AS id, m.content, r.status
           FROM agent_runs r JOIN messages m ON m.id = r.reply_id`,
      )
      .get() as { delivery: string; id: string | null; content: string; status: string };
  }

  /** Starts a bot on the crashed file and waits until it settled what it found. */
  async function restartOn(image: string) {
    const { bot, store } = await botAt(image, new PacedAgent());
    await bot.idle();
    await bot.settled();
    return replyRow(store);
  }

  it('stops a stream started before the crash whose ts was never recorded, and records it', async () => {
    // given a bot killed after Slack started its stream, before the answer named the ts
    const image = await crashAt('chat.startStream', ['The order'], true);
    expect(slack.posted).toMatchObject([{ streaming: true }]);

    // when it starts again
    const settled = await restartOn(image);

    // then the stream is stopped, shows what the record holds, is marked, and nothing is posted
    expect(slack.posted).toHaveLength(1);
    expect(slack.posted[0]).toMatchObject({
      streaming: false,
      text: settled.content,
      metadata: { event_type: 'colloquy_reply', event_payload: { part: 0, streamed: true } },
    });
    expect(settled).toMatchObject({
      delivery: 'sent',
      id: slack.posted[0]!.ts,
      status: 'answered',
    });
  });

  it('stops a stream whose ts was recorded before the crash, showing what the record holds', async () => {
    // given a bot killed as it appended to a stream whose ts it had recorded
    const image = await crashAt('chat.appendStream', ['The order', ' ships'], false, true);
    const ts = slack.posted[0]!.ts;

    // when it starts again
    const settled = await restartOn(image);

    // then that stream is stopped and marked, and its text is the recorded one
    expect(slack.posted).toHaveLength(1);
    expect(slack.posted[0]).toMatchObject({ ts, streaming: false, text: settled.content });
    expect(settled).toMatchObject({ delivery: 'sent', id: ts, status: 'answered' });
  });

  it('records a stream Slack stopped before the crash, changing nothing', async () => {
    // given a bot killed after Slack stopped its stream with the reply's metadata
    const image = await crashAt('chat.stopStream', ['The order ships tomorrow.'], true);
    const before = { ...slack.posted[0]! };

    // when it starts again
    const settled = await restartOn(image);

    // then the stopped stream is recorded as it is, with no call that changes a message
    expect(slack.posted).toEqual([before]);
    const changes = slack.calls.filter((c) =>
      /^chat\.(update|stopStream|postMessage)$/.test(c.method),
    );
    expect(changes).toHaveLength(1); // the stopStream of the run before the crash
    expect(settled).toMatchObject({ delivery: 'sent', id: before.ts, status: 'answered' });
  });

  /** The thread a held `chat.startStream` was to stream into: the owner writes there too. */
  async function threadOfStream() {
    const start = slack.calls.find((c) => c.method === 'chat.startStream')!;
    const client = new WebClient(slack.token, { slackApiUrl: slack.slackApiUrl });
    return { client, thread: String(start.params.thread_ts) };
  }

  it('leaves an unmarked message the owner posted in the thread as it is', async () => {
    // given a crash before the stream started, then the owner's code posting in the thread
    const image = await crashAt('chat.startStream', ['The order'], false);
    const { client, thread } = await threadOfStream();
    await client.chat.postMessage({
      channel: GENERAL,
      thread_ts: thread,
      text: 'Ticket #42 opened.',
    });
    const owners = { ...slack.posted[0]! };

    // when the bot starts again
    const settled = await restartOn(image);

    // then the owner's message is unchanged and the reply is posted once beside it
    expect(slack.posted[0]).toEqual(owners);
    expect(slack.posted).toHaveLength(2);
    expect(slack.posted[1]).toMatchObject({
      text: settled.content,
      metadata: { event_payload: { part: 0 } },
    });
    expect(settled).toMatchObject({ delivery: 'sent', id: slack.posted[1]!.ts });
  });

  it('does not stop or claim a stream in the thread whose text is not the reply’s', async () => {
    // given a crash before the stream started, then another stream running in the thread
    const image = await crashAt('chat.startStream', ['The order'], false);
    const { client, thread } = await threadOfStream();
    await client.chat.startStream({
      channel: GENERAL,
      thread_ts: thread,
      markdown_text: 'Looking up ticket',
      recipient_user_id: 'U0ALICE',
      recipient_team_id: 'T0FAKE',
    });

    // when the bot starts again
    const settled = await restartOn(image);

    // then that stream runs on untouched, and the reply is posted once beside it
    expect(slack.posted[0]).toMatchObject({ text: 'Looking up ticket', streaming: true });
    expect(slack.posted[0]!.metadata).toBeUndefined();
    expect(slack.posted).toHaveLength(2);
    expect(settled).toMatchObject({ delivery: 'sent', id: slack.posted[1]!.ts });
  });

  it('posts the reply once when the crash came before the stream started', async () => {
    // given a bot killed as it called chat.startStream, before Slack did anything
    const image = await crashAt('chat.startStream', ['The order'], false);
    expect(slack.posted).toHaveLength(0);

    // when it starts again
    const settled = await restartOn(image);

    // then the recorded words are posted once, marked as part 0
    expect(slack.posted).toMatchObject([
      { text: settled.content, metadata: { event_payload: { part: 0 } } },
    ]);
    expect(settled).toMatchObject({
      delivery: 'sent',
      id: slack.posted[0]!.ts,
      status: 'answered',
    });
  });
});

describe('FakeSlack keeps message metadata as Slack does', () => {
  it('returns it from conversations.history only with include_all_metadata', async () => {
    const slack = await FakeSlack.start();
    try {
      const call = (method: string, params: Record<string, unknown>) =>
        fetch(`${slack.slackApiUrl}${method}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${slack.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(params),
        }).then((res) => res.json() as Promise<Record<string, unknown>>);
      const metadata = { event_type: 'order_shipped', event_payload: { order: 42 } };
      await call('chat.postMessage', { channel: GENERAL, text: 'shipped', metadata });

      const plain = await call('conversations.history', { channel: GENERAL });
      const whole = await call('conversations.history', {
        channel: GENERAL,
        include_all_metadata: true,
      });

      expect(plain.messages).toEqual([expect.not.objectContaining({ metadata })]);
      expect(whole.messages).toEqual([expect.objectContaining({ text: 'shipped', metadata })]);
    } finally {
      await slack.close();
    }
  });
});

describe('Slack: a reply whose answer is lost while the bot runs', () => {
  let slack: FakeSlack;
  let hop: LossyHop;
  let started: StartedBot;

  afterEach(async () => {
    await started.bot.stop();
    await hop.close();
    await slack.close();
  });

  it('is found by its metadata and recorded with the ts Slack gave it, posted once', async () => {
    // given a hop that loses Slack's answer to the first chat.postMessage, after Slack posted it
    slack = await FakeSlack.start();
    hop = await lossyHop(
      new URL(slack.slackApiUrl).origin,
      (req) => req.url?.endsWith('/chat.postMessage') === true,
    );
    const channel = new SlackChannel({
      token: slack.token,
      signingSecret: slack.signingSecret,
      port: 0,
      host: '127.0.0.1',
      logLevel: LogLevel.ERROR,
      clientOptions: { slackApiUrl: `${hop.origin}/api/` }, // the channel's own retry policy
    });
    const agent = new ScriptedAgent({ output: 'Your refund of 40 EUR is on its way.' });
    started = await startedBot(channel, { agents: [agent] });
    slack.eventsUrl = channel.eventsUrl;

    // when Alice asks and the bot answers
    await slack.mention({ channel: GENERAL, user: 'U0ALICE', text: 'where is my refund?' });
    await started.bot.idle();

    // then Slack has the reply once, and the record names that message
    expect(hop.lost()).toBe(1);
    expect(slack.posted).toHaveLength(1);
    expect(slack.calls.map((call) => call.method)).toContain('conversations.replies');
    const conversationId = `slack:${slack.teamId}:${GENERAL}:${slack.posted[0]!.thread_ts}`;
    const turns = await started.bot.store.get(conversationId);
    const reply = turns.find((turn) => turn.delivery !== undefined);
    expect(reply).toMatchObject({ delivery: 'sent', metadata: { messageId: slack.posted[0]!.ts } });
    expect(started.errors).toEqual([]);
  });
});
