import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot, ColloquyError } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeSlack } from 'colloquy/testing';
import { gatedStore } from '../../fixtures/gated-store.js';
import { lossyHop, type LossyHop } from '../../fixtures/lossy-hop.js';
import { ScriptedAgent } from '../../fixtures/scripted-agent.js';
import { watched } from '../../fixtures/watched-store.js';
import { startSlackBot } from './slack.fixtures.js';

const inGeneral = 'slack:T0FAKE:C0GENERAL';

describe('reactions on Slack (Bolt against FakeSlack, SQLite store)', () => {
  let slack: FakeSlack;
  let sqlite: SqliteConversationStore;
  let store: ReturnType<typeof watched>;
  let bot: Bot;
  let errors: ColloquyError[];

  beforeEach(async () => {
    slack = await FakeSlack.start();
    slack.addUser('U0ALICE', 'alice');
    sqlite = new SqliteConversationStore({ path: ':memory:' });
    store = watched(sqlite);
  });

  describe('on a bot without agents', () => {
    beforeEach(async () => {
      ({ bot, errors } = await startSlackBot(slack, { store: store.store }));
    });

    afterEach(async () => {
      await bot.stop();
      await slack.close();
      await sqlite.close();
    });

    it('records a reaction added and removed, answered once recorded, as no turn', async () => {
      const { event } = await slack.message({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'ok?' });
      const [turn] = await store.turns(inGeneral, (t) => t.length === 1);
      const ts = event.ts as string;
      const added = await slack.react({
        channel: 'C0GENERAL',
        user: 'U0ALICE',
        ts,
        reaction: '-1',
      });
      expect(await sqlite.getReactions(inGeneral, turn!.id)).toEqual([
        { participantId: 'slack:U0ALICE', reaction: '-1', addedAt: expect.any(String) },
      ]);
      const removed = await slack.react({
        channel: 'C0GENERAL',
        user: 'U0ALICE',
        ts,
        reaction: '-1',
        removed: true,
      });
      expect([added.status, removed.status]).toEqual([200, 200]);
      expect(await sqlite.getReactions(inGeneral, turn!.id)).toMatchObject([
        { reaction: '-1', removedAt: expect.any(String) },
      ]);
      expect(await store.store.get(inGeneral)).toHaveLength(1);
      expect(errors).toEqual([]);
    });

    it('answers a reaction on a message it never saw without recording it', async () => {
      const delivery = await slack.react({
        channel: 'C0GENERAL',
        user: 'U0ALICE',
        ts: '1600000000.000100',
        reaction: 'tada',
      });
      expect(delivery.status).toBe(200);
      expect(errors).toEqual([]);
    });
  });

  it("records a reaction on the agent's reply that comes while the reply's confirmation commits", async () => {
    const gated = gatedStore(sqlite);
    // The kinds of ops the store is handed, in order.
    const kinds: string[] = [];
    const lookedUp = new Proxy(gated.store, {
      get(target, key) {
        if (key !== 'commit') return Reflect.get(target, key) as unknown;
        return (ops: Parameters<SqliteConversationStore['commit']>[0]) => {
          kinds.push(...ops.map((op) => op.kind));
          return target.commit(ops);
        };
      },
    });
    const agent = new ScriptedAgent({ output: 'Order 4711 ships Tuesday.' });
    ({ bot, errors } = await startSlackBot(slack, { store: lookedUp, agents: [agent] }));
    const posting = slack.holdNext('chat.postMessage', { done: true });
    void slack.mention({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'files-agent, order 4711?' });
    await posting.arrived;
    const confirming = gated.hold();
    posting.release();
    await confirming.arrived; // the reply is on Slack; its platform id is not committed yet
    const reply = slack.posted[0]!;

    const waiting = bot.captureStats!.waiting;
    const reacting = slack.react({
      channel: 'C0GENERAL',
      user: 'U0ALICE',
      ts: reply.ts,
      reaction: 'thumbsdown',
    });
    // the reaction waits in capture behind the confirmation, and is committed after it
    await expect.poll(() => bot.captureStats?.waiting).toBeGreaterThan(waiting);
    confirming.release();
    expect((await reacting).status).toBe(200);

    await bot.idle();
    const thread = `${inGeneral}:${reply.thread_ts}`; // the agent answers in the mention's thread
    const answer = (await sqlite.get(thread)).find((turn) => turn.participant.kind === 'agent');
    expect(answer).toMatchObject({ delivery: 'sent', metadata: { messageId: reply.ts } });
    expect(await sqlite.getReactions(thread, answer!.id)).toMatchObject([
      { participantId: 'slack:U0ALICE', reaction: 'thumbsdown' },
    ]);
    expect(kinds.indexOf('confirm')).toBeGreaterThanOrEqual(0);
    expect(kinds.indexOf('reaction')).toBeGreaterThan(kinds.indexOf('confirm'));
    expect(errors).toEqual([]);
  });
});

describe("the bot's own reaction on Slack whose answer is lost", () => {
  let slack: FakeSlack;
  let hop: LossyHop;
  let sqlite: SqliteConversationStore;
  let bot: Bot;

  afterEach(async () => {
    await bot.stop();
    await hop.close();
    await slack.close();
    await sqlite.close();
  });

  it('is recorded once Slack answers the repeat that the reaction is there', async () => {
    // given a hop that loses Slack's answer to the first reactions.add, after Slack added it
    slack = await FakeSlack.start();
    slack.addUser('U0ALICE', 'alice');
    hop = await lossyHop(
      new URL(slack.slackApiUrl).origin,
      (req) => req.url?.endsWith('/reactions.add') === true,
    );
    sqlite = new SqliteConversationStore({ path: ':memory:' });
    ({ bot } = await startSlackBot(
      slack,
      { store: sqlite },
      { clientOptions: { slackApiUrl: `${hop.origin}/api/` } },
    ));
    await slack.message({ channel: 'C0GENERAL', user: 'U0ALICE', text: 'deploy done' });
    await bot.idle();
    const [turn] = await sqlite.get(inGeneral);

    // when the bot reacts to Alice's message
    await bot.react(inGeneral, turn!.id, 'eyes');

    // then Slack shows the reaction once, and the record has it
    expect(hop.lost()).toBe(1);
    expect(slack.reactions).toEqual([expect.objectContaining({ name: 'eyes' })]);
    expect(await sqlite.getReactions(inGeneral, turn!.id)).toEqual([
      expect.objectContaining({ reaction: 'eyes' }),
    ]);
  });
});
