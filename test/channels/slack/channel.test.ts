import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LogLevel } from '@slack/bolt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  MalformedEventError,
  NetworkError,
  PlatformError,
  RateLimitError,
  type ChannelHandlers,
  type ColloquyError,
  type MessageDeletion,
  type MessageEdit,
  type NewMessage,
} from 'colloquy';
import { SlackChannel, type SlackChannelOptions } from 'colloquy/slack';
import { FakeSlack } from 'colloquy/testing';

const DELIVERED = { handled: Promise.resolve() };

/** ChannelHandlers that record what the channel reports. */
class Recorder implements ChannelHandlers {
  readonly messages: NewMessage[] = [];
  readonly edits: MessageEdit[] = [];
  readonly deletions: MessageDeletion[] = [];
  readonly errors: ColloquyError[] = [];
  /** Every turn, edit and deletion in the order the channel handed it over. */
  readonly log: string[] = [];
  private waiters: (() => void)[] = [];

  /** Logged when handed over; kept in `messages` once complete (with its names). */
  async message(message: NewMessage, complete?: Promise<NewMessage>) {
    this.log.push(`message: ${message.content}`);
    this.messages.push(await (complete ?? message));
    this.notify();
    return DELIVERED;
  }
  async edit(edit: MessageEdit, complete?: Promise<MessageEdit>) {
    this.log.push(`edit: ${edit.content}`);
    this.edits.push(await (complete ?? edit));
    this.notify();
    return DELIVERED;
  }
  async delete(deletion: MessageDeletion) {
    this.deletions.push(deletion);
    this.log.push(`delete: ${deletion.messageId}`);
    this.notify();
    return DELIVERED;
  }
  async capacity() {}
  error(error: ColloquyError) {
    this.errors.push(error);
    this.notify();
  }
  /** Resolves once `count` messages have arrived. */
  waitForMessages(count: number): Promise<NewMessage[]> {
    return this.waitForLog(() => this.messages.length >= count).then(() => this.messages);
  }
  /** Resolves with the log once `done` holds for it. */
  waitForLog(done: (log: string[]) => boolean): Promise<string[]> {
    return new Promise((resolve) => {
      const check = () => {
        if (!done(this.log)) return;
        this.waiters = this.waiters.filter((w) => w !== check);
        resolve(this.log);
      };
      this.waiters.push(check);
      check();
    });
  }
  private notify() {
    for (const waiter of [...this.waiters]) waiter();
  }
}

let slack: FakeSlack;
let channel: SlackChannel;
let handlers: Recorder;

async function startChannel(options: Partial<SlackChannelOptions> = {}) {
  channel = new SlackChannel({
    token: slack.token,
    signingSecret: slack.signingSecret,
    port: 0,
    host: '127.0.0.1',
    // Hold each HTTP answer until the turn is handled, so a delivery resolves after it.
    logLevel: LogLevel.ERROR,
    clientOptions: {
      slackApiUrl: slack.slackApiUrl,
      retryConfig: { retries: 2, minTimeout: 10, maxTimeout: 20 },
    },
    ...options,
  });
  handlers = new Recorder();
  await channel.start(handlers);
  slack.eventsUrl = channel.eventsUrl;
}

beforeEach(async () => {
  slack = await FakeSlack.start({ channels: { C0GENERAL: 'general' } });
});

afterEach(async () => {
  await channel?.stop();
  await slack.close();
});

describe('SlackChannel (HTTP events)', () => {
  it('learns its identity from auth.test', async () => {
    await startChannel();
    expect(channel.botIdentity).toEqual({
      id: 'slack:U0BOT',
      username: 'colloquy',
      displayName: 'colloquy',
    });
  });

  it('makes one turn of a mention although Slack sends message and app_mention', async () => {
    await startChannel();
    await slack.mention({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'status?' });
    // handed over once, or twice with one id (the store keeps it once)
    expect(new Set(handlers.messages.map((m) => m.id)).size).toBe(1);
    expect(handlers.messages[0]).toMatchObject({
      conversationId: 'slack:T0FAKE:C0GENERAL',
      participant: { kind: 'user', id: 'slack:U0ALICE', displayName: 'Alice' },
      content: '@colloquy status?',
      scope: 'channel',
      metadata: { channelName: 'general', mentions: ['slack:U0BOT'] },
    });
  });

  it('hands a retried event over with the same turn id, and acknowledges it', async () => {
    await startChannel();
    const { event, delivery } = await slack.message({
      channel: 'C0GENERAL',
      user: 'U0BOB',
      text: 'hi',
    });
    const retry = await slack.sendEvent(event, { eventId: delivery.eventId, retryNum: 1 });
    expect(retry.status).toBe(200);
    expect(handlers.messages).toHaveLength(2);
    expect(handlers.messages[1]?.id).toBe(handlers.messages[0]?.id);
  });

  it('rejects a badly signed request with 401 and delivers nothing', async () => {
    await startChannel();
    const { delivery } = await slack.message(
      { channel: 'C0GENERAL', user: 'U0BOB', text: 'hi' },
      { signingSecret: 'not-the-secret' },
    );
    expect(delivery.status).toBe(401);
    expect(handlers.messages).toHaveLength(0);
  });

  it('reports a malformed event and keeps delivering', async () => {
    await startChannel();
    await slack.sendEvent({ type: 'message', channel: 'C0GENERAL', text: 'no author, no ts' });
    await slack.message({ channel: 'C0GENERAL', user: 'U0BOB', text: 'still there?' });
    expect(handlers.errors[0]).toBeInstanceOf(MalformedEventError);
    expect(handlers.messages.map((m) => m.content)).toEqual(['still there?']);
  });

  it('ignores its own messages', async () => {
    await startChannel();
    await slack.sendEvent({
      type: 'message',
      channel: 'C0GENERAL',
      user: 'U0BOT',
      bot_id: 'B0BOT',
      text: 'me',
      ts: slack.nextTs(),
    });
    expect(handlers.messages).toHaveLength(0);
  });

  it('reports edits and deletions', async () => {
    await startChannel();
    const { event } = await slack.message({
      channel: 'C0GENERAL',
      user: 'U0BOB',
      text: 'teh plan',
    });
    const ts = event.ts as string;
    await slack.editMessage({
      channel: 'C0GENERAL',
      user: 'U0BOB',
      ts,
      text: 'the plan',
      previousText: 'teh plan',
    });
    await slack.deleteMessage({ channel: 'C0GENERAL', ts });
    expect(handlers.edits).toMatchObject([
      { channelId: 'C0GENERAL', messageId: ts, content: 'the plan' },
    ]);
    expect(handlers.deletions).toMatchObject([{ channelId: 'C0GENERAL', messageId: ts }]);
  });

  it('falls back to the user id when users.info fails', async () => {
    await startChannel();
    slack.failNext('users.info', { error: 'missing_scope' });
    await slack.message({ channel: 'C0GENERAL', user: 'U0CAROL', text: 'hello' });
    expect(handlers.messages[0]?.participant.displayName).toBe('U0CAROL');
  });
});

describe('SlackChannel hands events over as Bolt delivered them, names to follow', () => {
  const THREAD = '1773226800.000100';
  const inThread = { channel: 'C0GENERAL', thread_ts: THREAD, parent_user_id: 'U0BOB' };

  it('hands two turns of a thread over in order while the first author is looked up', async () => {
    // given a channel that knows Bob and #general already, and a slow users.info for Alice
    await startChannel();
    await slack.message({ channel: 'C0GENERAL', user: 'U0BOB', text: 'morning' });
    await handlers.waitForMessages(1);
    const lookup = slack.holdNext('users.info');

    // when Alice writes in a thread, and Bob answers while her name is still being looked up
    // (neither is acknowledged before it is handed over)
    const asked = slack.message({ ...inThread, user: 'U0ALICE', text: 'deploy now?' });
    await lookup.arrived;
    const answered = slack.message({ ...inThread, user: 'U0BOB', text: 'go ahead' });
    lookup.release();
    await Promise.all([asked, answered]);

    // then the thread's turns are handed over as they arrived, Alice's completed with her name
    await handlers.waitForMessages(3);
    expect(handlers.log).toEqual(['message: morning', 'message: deploy now?', 'message: go ahead']);
    const asking = handlers.messages.find((m) => m.content === 'deploy now?');
    expect(asking?.participant.displayName).toBe('Alice');
  });

  it('hands an edit and a deletion over after the turn they change', async () => {
    // given a slow users.info for Alice
    await startChannel();
    const lookup = slack.holdNext('users.info');

    // when she writes, edits and deletes before her name is known
    const ts = slack.nextTs();
    const events: Promise<unknown>[] = [
      slack.message({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'teh', ts }),
    ];
    await lookup.arrived;
    events.push(
      slack.editMessage({
        channel: 'C0GENERAL',
        user: 'U0ALICE',
        ts,
        text: 'the',
        previousText: 'teh',
      }),
    );
    events.push(slack.deleteMessage({ channel: 'C0GENERAL', ts }));
    lookup.release();
    await Promise.all(events);

    // then the turn comes first, then its edit, then its deletion
    const log = await handlers.waitForLog((entries) => entries.length === 3);
    expect(log).toEqual(['message: teh', 'edit: the', `delete: ${ts}`]);
  });

  it('completes a turn of another conversation while one author is looked up', async () => {
    // given a slow users.info for Alice, who has written in a thread
    await startChannel();
    const lookup = slack.holdNext('users.info');
    const asked = slack.message({ ...inThread, user: 'U0ALICE', text: 'deploy now?' });
    await lookup.arrived;

    // when Bob writes in the channel itself (another conversation) meanwhile
    await slack.message({ channel: 'C0GENERAL', user: 'U0BOB', text: 'quick one' });

    // then his turn is complete before Alice's lookup ends, and hers after it
    await handlers.waitForMessages(1);
    expect(handlers.messages.map((m) => m.content)).toEqual(['quick one']);
    lookup.release();
    await asked;
    await handlers.waitForMessages(2);
    expect(handlers.messages.map((m) => m.content)).toEqual(['quick one', 'deploy now?']);
  });
});

describe('SlackChannel.send', () => {
  const outbound = {
    conversationId: 'slack:T0FAKE:C0GENERAL',
    scope: 'channel' as const,
    channelId: 'C0GENERAL',
  };

  it('posts in the thread and returns the ts', async () => {
    await startChannel();
    const sent = await channel.send({
      ...outbound,
      threadId: '1800000000.000001',
      content: 'done',
    });
    expect(slack.posted).toMatchObject([
      { channel: 'C0GENERAL', thread_ts: '1800000000.000001', text: 'done' },
    ]);
    expect(sent.messageIds).toEqual([slack.posted[0]?.ts]);
  });

  it('waits out a 429 and posts', async () => {
    await startChannel();
    slack.failNext('chat.postMessage', { status: 429, retryAfter: 1 });
    const sent = await channel.send({ ...outbound, content: 'eventually' });
    expect(sent.messageIds).toHaveLength(1);
    expect(slack.calls.filter((c) => c.method === 'chat.postMessage')).toHaveLength(2);
  });

  it('throws a PlatformError with the Slack error code when Slack refuses', async () => {
    await startChannel();
    slack.failNext('chat.postMessage', { error: 'not_in_channel' });
    const failure = channel.send({ ...outbound, content: 'hello?' });
    await expect(failure).rejects.toBeInstanceOf(PlatformError);
    await expect(failure).rejects.toMatchObject({ code: 'not_in_channel', platform: 'slack' });
  });

  it("throws a RateLimitError for Slack's own rate_limited answer", async () => {
    await startChannel();
    slack.failNext('chat.postMessage', { error: 'rate_limited' });

    const error = await channel.send({ ...outbound, content: 'again?' }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ platform: 'slack', code: 'rate_limited', transient: true });
  });

  it('reports the ts of the parts that went out to partPosted when a later part is refused', async () => {
    // given a reply split in two, and Slack refusing the second part
    await startChannel({ textLimit: 100 });
    const firstPosted = slack
      .waitForPosted(1)
      .then(() => slack.failNext('chat.postMessage', { error: 'not_in_channel' }));

    // when it is sent
    const told: (readonly string[])[] = [];
    const error = await channel
      .send(
        { ...outbound, content: `${'a'.repeat(80)}\n\n${'b'.repeat(80)}` },
        { partPosted: async (ids) => void told.push(ids) },
      )
      .catch((e: unknown) => e);
    await firstPosted;

    // then the part that did get through was reported before the error
    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({ code: 'not_in_channel' });
    expect(told).toEqual([[slack.posted[0]?.ts]]);
    expect(slack.posted).toHaveLength(1);
  });

  it('throws a NetworkError when Slack cannot be reached', async () => {
    await startChannel();
    await slack.close();
    await expect(channel.send({ ...outbound, content: 'anyone?' })).rejects.toBeInstanceOf(
      NetworkError,
    );
    slack = await FakeSlack.start();
  });
});

describe('SlackChannel (Socket Mode)', () => {
  it('receives a mention over Socket Mode and acknowledges it', async () => {
    await startChannel({ appToken: slack.appToken, signingSecret: undefined });
    await slack.waitForSocket();
    const { deliveries } = await slack.mention({
      channel: 'C0GENERAL',
      user: 'U0ALICE',
      text: 'ping',
    });
    const [message] = await handlers.waitForMessages(1);
    expect(message?.content).toBe('@colloquy ping');
    expect(slack.acks).toEqual(deliveries.map((d) => d.envelopeId));
  });
});

describe('SlackChannel on a server it does not own', () => {
  it('serves events through requestListener and 404s other paths', async () => {
    await startChannel({ listen: false, port: undefined, host: undefined });
    const server = createServer((req, res) => channel.requestListener(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    slack.eventsUrl = `http://127.0.0.1:${port}/slack/events`;

    await slack.mention({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'mounted?' });
    const other = await fetch(`http://127.0.0.1:${port}/elsewhere`);

    expect(handlers.messages.map((m) => m.content)).toContain('@colloquy mounted?');
    expect(other.status).toBe(404);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
});
