import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogLevel } from '@slack/bolt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SlackChannel } from 'colloquy/slack';
import { FakeSlack } from 'colloquy/testing';
import { crashAndRestart } from '../../fixtures/crash-image.js';

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
