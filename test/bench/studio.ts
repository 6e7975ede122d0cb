import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SqliteConversationStore, SqliteStudioSource } from '../../db/sqlite/index.js';
import { createStudioApp } from '../../db/studio/server.js';
import type { NewMessage, Participant } from '../../src/types.js';
import { addRuns } from '../fixtures/studio-db.js';
import { int, latency, line, ms, note, percentiles, verdict } from './report.js';
import type { Outcome } from './store.js';
import { removeDb } from './store-write.js';

const CONVERSATION = 'slack:T1:CSTUDIO';
const agent: Participant = { kind: 'agent', id: 'support', displayName: 'Support' };
const people: Participant[] = ['Alice', 'Bob', 'Carol', 'Dave'].map((name) => ({
  kind: 'user',
  id: `slack:U0${name.toUpperCase()}`,
  displayName: name,
}));

/** Turn `i`: people talk, every 10th turn the bot answers the one before, with a tool step every 50th. */
function turn(i: number): NewMessage {
  const ts = `${1_700_000_000 + i}.000000`;
  const answering = i % 10 === 9;
  const who = answering ? agent : (people[i % people.length] as Participant);
  const asked = `${1_700_000_000 + i - 1}.000000`;
  return {
    id: `${CONVERSATION}:${ts}`,
    conversationId: CONVERSATION,
    participant: who,
    content: answering
      ? `Answer ${i}: the deploy of build ${i} finished and the cache was cleared.`
      : `Message ${i} about invoice ${i % 977} and the release checklist <b>${i}</b>`,
    timestamp: new Date((1_700_000_000 + i) * 1000).toISOString(),
    scope: 'channel',
    metadata: {
      channelType: 'slack',
      channelId: 'CSTUDIO',
      channelName: 'busy',
      messageId: ts,
      mentions: i % 10 === 8 ? ['slack:U0BOT'] : [],
      ...(answering
        ? { replyToMessageId: asked, replyToParticipantId: people[(i - 1) % people.length]?.id }
        : {}),
    },
  };
}

/**
 * `colloquy studio`'s first screen of a 100,000-turn conversation (the newest 100
 * turns with their edits, reply links and agent runs, rendered to HTML), timed as server time:
 * from the request to the whole body, through the Hono app in this process (no socket).
 */
export async function benchStudio(options: {
  messages: number;
  dir: string;
  iterations?: number;
}): Promise<Outcome[]> {
  const dir = join(options.dir, 'studio');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'studio.db');
  removeDb(path);
  const messages = options.messages;
  console.log(`\n── Studio: first screen of one conversation of ${int(messages)} turns ──`);

  const store = new SqliteConversationStore({
    path,
  });
  const fillStart = performance.now();
  for (let start = 0; start < messages; start += 5000) {
    const pending: Promise<unknown>[] = [];
    store.db.transaction(() => {
      for (let i = start; i < Math.min(messages, start + 5000); i++)
        pending.push(store.append(turn(i)));
    })();
    await Promise.all(pending);
  }
  // Edits and a deletion near the end, where the first screen shows them.
  for (let i = messages - 90; i < messages; i += 7) {
    if (i % 10 === 9) continue;
    await store.recordEdit({
      channelType: 'slack',
      channelId: 'CSTUDIO',
      messageId: `${1_700_000_000 + i}.000000`,
      content: `Message ${i}, edited`,
      editedAt: new Date((1_700_000_000 + messages) * 1000).toISOString(),
    });
  }
  addRuns(store.db, agent.id);
  await store.close();
  console.log(
    note(
      `filled ${int(messages)} turns, runs for every 10th, edits on the last screen in ${int((performance.now() - fillStart) / 1000)} s`,
    ),
  );

  const source = SqliteStudioSource.open(path);
  const { app, token } = createStudioApp({ source, token: 'bench' });
  const headers = { cookie: `colloquy_studio=${token}` };
  const url = `/c/${encodeURIComponent(CONVERSATION)}`;
  const iterations = options.iterations ?? 100;
  try {
    const time = async (run: () => Promise<unknown>) => {
      for (let i = 0; i < 5; i++) await run();
      const samples: number[] = [];
      for (let i = 0; i < iterations; i++) {
        const t0 = performance.now();
        await run();
        samples.push(performance.now() - t0);
      }
      return latency(samples);
    };
    let bytes = 0;
    const page = await time(async () => {
      const response = await app.request(url, { headers });
      if (response.status !== 200) throw new Error(`studio answered ${response.status}`);
      bytes = (await response.text()).length;
    });
    const rows = await time(() => source.turns(CONVERSATION, { limit: 100 }));
    const list = await time(async () => (await app.request('/', { headers })).text());
    const search = await time(async () =>
      (await app.request('/?q=invoice+checklist', { headers })).text(),
    );
    const runs = await time(async () => (await app.request('/runs', { headers })).text());
    const overview = await time(async () => (await app.request('/overview', { headers })).text());
    const pass = page.p50 < 300 && page.p99 < 300;
    console.log(
      line(
        'first screen',
        percentiles(page),
        `reading the rows ${percentiles(rows)}`,
        `p50, p99 < 300 ms ${verdict(pass)}`,
      ),
    );
    console.log(
      note(
        `${int(bytes)} bytes of HTML for 100 turns; ${iterations} timed requests after 5 warm-up`,
      ),
    );
    console.log(line('conversation list', percentiles(list), ''));
    console.log(line('agent runs page', percentiles(runs), '200 runs and the unanswered turns'));
    console.log(
      line('overview charts', percentiles(overview), 'three charts over every turn and run'),
    );
    console.log(
      line(
        'search, 2 words',
        percentiles(search),
        `50 hits, ranked (bm25) over ${int(messages)} turns`,
      ),
    );
    return [
      {
        label: `studio first screen of ${int(messages)} turns, p50 ${ms(page.p50)} p99 ${ms(page.p99)} (< 300 ms)`,
        pass,
      },
    ];
  } finally {
    await source.close();
  }
}
