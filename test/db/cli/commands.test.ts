import { once } from 'node:events';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHANNEL,
  DM,
  alice,
  assertBinIsBuilt,
  bob,
  colloquy,
  populate,
  start,
  tempDir,
  turn,
  waitForOutput,
} from './cli-harness.js';

const dir = tempDir();
const db = dir.file('bot.db');

beforeAll(async () => {
  assertBinIsBuilt();
  await populate(db);
});
afterAll(() => dir.remove());

describe('colloquy tail', () => {
  it('prints the newest turns oldest first as "time  conversation  speaker (kind): text"', async () => {
    const { code, stdout } = await colloquy(['tail', '-n', '2', '--db', db]);
    expect(code).toBe(0);
    expect(stdout).toBe(
      `2026-11-17T09:11:00.000Z  ${CHANNEL}  Orders (agent): Acme renewed on Monday.\n` +
        `2026-11-17T09:12:00.000Z  ${CHANNEL}  Alice (user): nice\n`,
    );
  });

  it('keeps each turn on one line and marks edits and deletions', async () => {
    const { stdout } = await colloquy(['tail', '--conversation', DM, '--db', db]);
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toContain('Alice (user): [edited] where is my order 1235?');
    expect(lines[2]).toContain('Alice (user): thanks! ↵ see you');
    expect(lines[3]).toContain('[deleted] oops, wrong chat');
    expect(lines.every((line) => line.includes(`  ${DM}  `))).toBe(true);
  });

  it('fails with one line for an unknown conversation', async () => {
    const { code, stdout, stderr } = await colloquy([
      'tail',
      '--conversation',
      'telegram:99',
      '--db',
      db,
    ]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^colloquy: no conversation telegram:99[^\n]*\n$/);
  });

  it('follows new turns as they are stored until SIGINT', async () => {
    const followed = dir.file('follow.db');
    await populate(followed);
    const child = start(['tail', '-f', '-n', '1', '--interval', '50', '--db', followed]);
    const exited = once(child, 'close');
    await waitForOutput(child.stdout, 'Alice (user): nice\n');

    // Listen before writing: the tail may print the turn before the writer has closed.
    const next = waitForOutput(child.stdout, 'anyone there?');
    const store = new SqliteConversationStore({ path: followed });
    await store.append(turn(13, bob, 'anyone there?', CHANNEL));
    await store.close();
    const seen = await next;
    child.kill('SIGINT');

    const [code] = (await exited) as [number | null];
    expect(seen).toContain(`${CHANNEL}  Bob (user): anyone there?`);
    expect(code).toBe(0);
  });
});

describe('colloquy conversations', () => {
  it('lists conversations newest activity first with message and participant counts', async () => {
    const { code, stdout } = await colloquy(['conversations', '--db', db]);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^id\s+channel\s+scope\s+name\s+title\s+messages\s+participants\s+first\s+last$/,
    );
    expect(lines[2]).toMatch(new RegExp(`^${CHANNEL}\\s+slack\\s+channel\\s+orders\\s+3\\s+3\\s`));
    expect(lines[3]).toMatch(new RegExp(`^${DM}\\s+telegram\\s+dm\\s+4\\s+2\\s`));
    expect(lines[4]).toBe('(2 rows)');
  });

  it('filters by channel type, by participant and by count', async () => {
    const telegram = await colloquy([
      'conversations',
      '--channel-type',
      'telegram',
      '--json',
      '--db',
      db,
    ]);
    expect((JSON.parse(telegram.stdout) as { id: string }[]).map((c) => c.id)).toEqual([DM]);

    const withBob = await colloquy([
      'conversations',
      '--participant',
      bob.id,
      '--json',
      '--db',
      db,
    ]);
    expect((JSON.parse(withBob.stdout) as { id: string }[]).map((c) => c.id)).toEqual([CHANNEL]);

    const newest = await colloquy(['conversations', '--limit', '1', '--json', '--db', db]);
    const second = await colloquy(['conversations', '--offset', '1', '--json', '--db', db]);
    expect((JSON.parse(second.stdout) as { id: string }[]).map((c) => c.id)).toEqual([DM]);
    const agents = await colloquy(['conversations', '--agent', 'nobody', '--db', db]);
    expect(agents.stdout).toBe('no conversations match\n');

    expect(JSON.parse(newest.stdout)).toEqual([
      {
        id: CHANNEL,
        channelType: 'slack',
        scope: 'channel',
        channelName: 'orders',
        title: null,
        messageCount: 3,
        participantCount: 3,
        firstMessageAt: '2026-11-17T09:10:00.000Z',
        lastMessageAt: '2026-11-17T09:12:00.000Z',
      },
    ]);
  });

  it('says when no conversation matches a filter', async () => {
    const { code, stdout } = await colloquy([
      'conversations',
      '--channel-type',
      'discord',
      '--db',
      db,
    ]);
    expect(code).toBe(0);
    expect(stdout).toBe('no conversations match\n');
  });
});

describe('colloquy stats', () => {
  it('reports counts, time range, file size and the busiest conversations', async () => {
    const { code, stdout } = await colloquy(['stats', '--db', db]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^messages\s+7 \(1 deleted\)$/m);
    expect(stdout).toMatch(/^conversations\s+2$/m);
    expect(stdout).toMatch(/^participants\s+3$/m);
    expect(stdout).toMatch(/^first message\s+2026-11-17T09:01:00\.000Z$/m);
    expect(stdout).toMatch(/^last message\s+2026-11-17T09:12:00\.000Z$/m);
    expect(stdout).toMatch(/^database\s+.*bot\.db \(\d+(\.\d)? (KB|MB)\)$/m);
    expect(stdout).toMatch(/^slack\s+1\s+3$/m);
    expect(stdout).toMatch(/^telegram\s+1\s+4$/m);
    expect(stdout).toMatch(/^user\s+2\s+5$/m);
    expect(stdout).toMatch(/^agent\s+1\s+2$/m);
    expect(stdout).toMatch(new RegExp(`busiest conversations\\n.*\\n.*\\n${DM}\\s+4\\s`));
  });

  it('prints the same figures as JSON', async () => {
    const { stdout } = await colloquy(['stats', '--json', '--db', db]);
    const stats = JSON.parse(stdout) as Record<string, unknown>;
    expect(stats).toMatchObject({ messages: 7, conversations: 2, participants: 3, deleted: 1 });
    expect(stats.byChannelType).toEqual([
      { channelType: 'telegram', conversations: 1, messages: 4 },
      { channelType: 'slack', conversations: 1, messages: 3 },
    ]);
  });
});

describe('colloquy forget', () => {
  it('needs --yes when stdin is not a terminal, and changes nothing without it', async () => {
    const copy = dir.file('forget-refused.db');
    await populate(copy);
    const { code, stderr } = await colloquy(['forget', alice.id, '--db', copy]);
    expect(code).toBe(2);
    expect(stderr).toBe(
      'colloquy: refusing to forget without --yes when stdin is not a terminal\n',
    );
    const count = await colloquy([
      'sql',
      '--json',
      '--db',
      copy,
      `select count(*) as n from messages where participant_id = '${alice.id}'`,
    ]);
    expect(JSON.parse(count.stdout)).toEqual([{ n: 4 }]);
  });

  it('deletes everything a participant wrote, in every conversation', async () => {
    const copy = dir.file('forget-delete.db');
    await populate(copy);
    const { code, stdout } = await colloquy(['forget', alice.id, '--yes', '--db', copy]);
    expect(code).toBe(0);
    expect(stdout).toBe(`deleted 4 messages by ${alice.id}\n`);
    const left = await colloquy([
      'sql',
      '--json',
      '--db',
      copy,
      'select participant_id from messages order by seq',
    ]);
    expect(
      (JSON.parse(left.stdout) as { participant_id: string }[]).some(
        (r) => r.participant_id === alice.id,
      ),
    ).toBe(false);
  });

  it('redacts instead with --redact, keeping the turns', async () => {
    const copy = dir.file('forget-redact.db');
    await populate(copy);
    const { code, stdout } = await colloquy([
      'forget',
      alice.id,
      '--redact',
      '--yes',
      '--db',
      copy,
    ]);
    expect(code).toBe(0);
    expect(stdout).toBe(`redacted 4 messages by ${alice.id}\n`);
    const left = await colloquy([
      'sql',
      '--json',
      '--db',
      copy,
      `select content from messages where participant_id = '${alice.id}'`,
    ]);
    const rows = JSON.parse(left.stdout) as { content: string }[];
    expect(rows).toHaveLength(4);
    expect(rows.some((r) => r.content.includes('order'))).toBe(false);
  });

  it('names the id to use when given the name the transcript shows, and changes nothing', async () => {
    // Given the console user, whom the transcript shows as "root" (id console:root)
    const copy = dir.file('forget-by-name.db');
    await populate(copy);
    const store = new SqliteConversationStore({ path: copy });
    const root = { kind: 'user' as const, id: 'console:root', displayName: 'root' };
    await store.append({
      ...turn(20, root, 'hello from the terminal'),
      conversationId: 'console:local',
    });
    await store.close();

    // When the person is named as the transcript shows them
    const byName = await colloquy(['forget', 'root', '--yes', '--db', copy]);

    // Then the id to use is named, and nothing was deleted
    expect(byName.code).toBe(1);
    expect(byName.stdout).toBe('');
    expect(byName.stderr).toBe(
      'colloquy: no participant id root; "root" is the name of console:root: run colloquy forget console:root\n',
    );
    const count = await colloquy([
      'sql',
      '--json',
      '--db',
      copy,
      "select count(*) as n from messages where participant_id = 'console:root'",
    ]);
    expect(JSON.parse(count.stdout)).toEqual([{ n: 1 }]);
  });

  it('lists every id that goes by a name shared by several participants', async () => {
    const copy = dir.file('forget-shared-name.db');
    await populate(copy);
    const store = new SqliteConversationStore({ path: copy });
    const other = { kind: 'user' as const, id: 'discord:7', displayName: 'Alice' };
    await store.append({ ...turn(21, other, 'hi'), conversationId: 'discord:dm:7' });
    await store.close();

    const { code, stderr } = await colloquy(['forget', 'alice', '--yes', '--db', copy]);
    expect(code).toBe(1);
    expect(stderr).toBe(
      'colloquy: no participant id alice; "Alice" is the name of discord:7 and telegram:1001: run colloquy forget with one of those ids\n',
    );
  });

  it('says there is nothing to forget for an unknown participant', async () => {
    const { code, stdout } = await colloquy(['forget', 'telegram:404', '--yes', '--db', db]);
    expect(code).toBe(0);
    expect(stdout).toBe('nothing to forget: no participant telegram:404\n');
  });
});
