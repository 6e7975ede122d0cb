import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Bot, ColloquyError } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { FakeSlack } from 'colloquy/testing';
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
    const added = await slack.react({ channel: 'C0GENERAL', user: 'U0ALICE', ts, reaction: '-1' });
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
