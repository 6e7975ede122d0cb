import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewMessage, StoredMessage } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeSlack } from 'colloquy/testing';
import { ScriptedAgent } from '../../fixtures/scripted-agent.js';
import { startedBot } from '../../fixtures/started-bot.js';
import { tempDirs } from '../../fixtures/temp-dirs.js';
import { slackChannelOn } from './slack.fixtures.js';

const temp = tempDirs();

describe('two Slack apps of one bot in one channel (Bolt against FakeSlack, SQLite file)', () => {
  let one: FakeSlack;
  let two: FakeSlack;
  let store: SqliteConversationStore;
  const running: { stop(): Promise<void> }[] = [];

  beforeEach(async () => {
    one = await FakeSlack.start({ bot: { userId: 'U0BOTONE', botId: 'B0ONE' } });
    two = await FakeSlack.start({ bot: { userId: 'U0BOTTWO', botId: 'B0TWO' } });
    one.addUser('U0ALICE', 'alice');
    two.addUser('U0ALICE', 'alice');
    store = new SqliteConversationStore({ path: join(temp.make('slack-apps'), 'bot.db') });
  });

  afterEach(async () => {
    for (const bot of running.splice(0)) await bot.stop();
    await store.close();
    await Promise.all([one.close(), two.close()]);
  });

  /** A bot with both apps' channels, answering every turn with `output`. */
  async function startBot(output: string) {
    const channels = [one, two].map((slack) => slackChannelOn(slack));
    const agent = new ScriptedAgent({ output });
    const started = await startedBot(channels, { store, agents: [agent] });
    running.push(started.bot);
    one.eventsUrl = channels[0]!.eventsUrl;
    two.eventsUrl = channels[1]!.eventsUrl;
    return started;
  }

  /** Every stored turn of every conversation. */
  async function allTurns(): Promise<StoredMessage[]> {
    const turns: StoredMessage[] = [];
    for (const c of (await store.listConversations()).items) turns.push(...(await store.get(c.id)));
    return turns;
  }

  /** The message event of `reply` (app one's) as Slack sends it to every app in the channel. */
  function messageEventOf(reply: { ts: string; text: string; thread_ts?: string }) {
    return {
      type: 'message',
      channel: 'C0GENERAL',
      channel_type: 'channel',
      user: 'U0BOTONE',
      bot_id: 'B0ONE',
      text: reply.text,
      ts: reply.ts,
      event_ts: reply.ts,
      ...(reply.thread_ts !== undefined && { thread_ts: reply.thread_ts }),
    };
  }

  it('stores app one’s reply once, confirmed, when app two hears it before app one learns its ts', async () => {
    // given app one's reply posted, its chat.postMessage answer held back
    const { bot, errors } = await startBot('Order 4711 ships Monday.');
    const held = one.holdNext('chat.postMessage', { done: true });
    await one.mention({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'where is 4711?' });
    await held.arrived;
    const reply = one.posted[0]!;

    // when app two hears the reply's message event first, then app one gets its answer
    await two.sendEvent(messageEventOf(reply));
    held.release();
    await bot.idle();
    await bot.settled();

    // then the reply is one turn, the agent's, sent with its ts; its run is answered
    const copies = (await allTurns()).filter((m) => m.content === 'Order 4711 ships Monday.');
    expect(copies.map((m) => [m.participant.id, m.delivery, m.metadata.messageId])).toEqual([
      ['files-agent', 'sent', reply.ts],
    ]);
    expect((await store.getRuns!({})).map((run) => run.status)).toEqual(['answered']);
    expect(errors).toEqual([]);
  });

  it('keeps app one’s reply as its agent wrote it when app two hears Slack’s message_changed of it', async () => {
    // given app one's reply, written in Markdown and sent in Slack's markup
    const { bot, errors } = await startBot('Order **4711** ships Monday.');
    await one.mention({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'where is 4711?' });
    await bot.idle();
    const reply = one.posted[0]!;

    // when app two hears the message_changed of app one's chat.update of it
    const edited = messageEventOf(reply);
    await two.sendEvent({
      type: 'message',
      subtype: 'message_changed',
      hidden: true,
      channel: 'C0GENERAL',
      channel_type: 'channel',
      event_ts: two.nextTs(),
      ts: two.nextTs(),
      message: { ...edited, edited: { user: 'U0BOTONE', ts: two.nextTs() } },
      previous_message: { ...edited, text: 'Order' },
    });
    await bot.idle();

    // then the reply keeps the agent's text, unedited
    const stored = (await allTurns()).filter((m) => m.participant.id === 'files-agent');
    expect(stored.map((m) => [m.content, m.editedAt])).toEqual([
      ['Order **4711** ships Monday.', undefined],
    ]);
    expect(errors).toEqual([]);
  });

  it('still records a person’s message and another bot’s, heard by both apps, once', async () => {
    // given the bot running both apps
    const { bot } = await startBot('On it.');

    // when a person and a bot that is not this bot's write in the channel, heard by both apps
    const alice = two.nextTs();
    const other = two.nextTs();
    const said: Record<string, unknown>[] = [
      { user: 'U0ALICE', text: 'morning all', ts: alice },
      { user: 'U0DEPLOY', bot_id: 'B0DEPLOY', text: 'deploy 4711 done', ts: other },
    ];
    for (const event of said) {
      const full = { type: 'message', channel: 'C0GENERAL', channel_type: 'channel', ...event };
      await one.sendEvent({ ...full, event_ts: event.ts });
      await two.sendEvent({ ...full, event_ts: event.ts });
    }
    await bot.idle();

    // then each is one turn of its author
    const turns: NewMessage[] = await allTurns();
    expect(turns.map((m) => [m.participant.id, m.content])).toEqual([
      ['slack:U0ALICE', 'morning all'],
      ['slack:U0DEPLOY', 'deploy 4711 done'],
    ]);
  });
});
