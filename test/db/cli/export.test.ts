import { readFileSync, writeFileSync } from 'node:fs';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredMessage } from '../../../src/types.js';
import {
  CHANNEL,
  DM,
  alice,
  assertBinIsBuilt,
  bob,
  colloquy,
  populate,
  tempDir,
  turn,
} from './cli-harness.js';

const dir = tempDir();
const db = dir.file('bot.db');
const big = dir.file('big.db');
const BIG = 20_000;

type Exported = StoredMessage & { revisions?: { content: string; replacedAt: string }[] };

const parseLines = (text: string): Exported[] =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Exported);

/** 20k turns through the store, in one transaction so the set-up stays quick. */
async function populateBig(path: string): Promise<void> {
  const store = new SqliteConversationStore({ path });
  store.db.exec('BEGIN');
  for (let n = 0; n < BIG; n++) {
    const conversation = n % 2 === 0 ? DM : CHANNEL;
    await store.append(
      turn(n, n % 3 === 0 ? bob : alice, `turn ${n} of a long history`, conversation),
    );
  }
  store.db.exec('COMMIT');
  await store.close();
}

beforeAll(async () => {
  assertBinIsBuilt();
  await populate(db);
  await populateBig(big);
}, 120_000);
afterAll(() => dir.remove());

describe('colloquy export --format jsonl', () => {
  it('writes one StoredMessage per line that round-trips to what the store returns', async () => {
    const { code, stdout, stderr } = await colloquy(['export', '--format', 'jsonl', '--db', db]);
    expect(code).toBe(0);
    expect(stderr).toBe('exported 7 messages\n');
    const exported = parseLines(stdout);
    expect(exported.map((m) => m.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7]);

    const store = new SqliteConversationStore({ path: db, readonly: true });
    const all = { includeDeleted: true, includeSummaries: true, limit: 1000 };
    const stored = [...(await store.get(DM, all)), ...(await store.get(CHANNEL, all))];
    await store.close();
    const withoutRevisions = exported.map(({ revisions: _revisions, ...message }) => message);
    expect(withoutRevisions).toEqual(stored);
  });

  it('carries the earlier text of an edited turn and the time of a deletion', async () => {
    const { stdout } = await colloquy(['export', '--conversation', DM, '--db', db]);
    const [edited, , , deleted] = parseLines(stdout);
    expect(edited?.content).toBe('where is my order 1235?');
    expect(edited?.editedAt).toBe('2026-11-17T09:30:00.000Z');
    expect(edited?.revisions).toEqual([
      { content: 'where is my order 1234?', replacedAt: '2026-11-17T09:30:00.000Z' },
    ]);
    expect(deleted?.deletedAt).toBe('2026-11-17T09:31:00.000Z');
    expect(deleted).not.toHaveProperty('revisions');
  });

  it('exports one conversation with --conversation and refuses an unknown one', async () => {
    const one = await colloquy(['export', '--conversation', CHANNEL, '--db', db]);
    expect(parseLines(one.stdout).map((m) => m.conversationId)).toEqual([
      CHANNEL,
      CHANNEL,
      CHANNEL,
    ]);
    expect(parseLines(one.stdout)[0]?.metadata).toMatchObject({
      channelType: 'slack',
      channelName: 'orders',
      mentions: ['orders-bot'],
    });

    const unknown = await colloquy(['export', '--conversation', 'discord:dm:1', '--db', db]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/^colloquy: no conversation discord:dm:1[^\n]*\n$/);
  });

  it('writes to a file with --out and says where on stderr', async () => {
    const out = dir.file('export.jsonl');
    const { code, stdout, stderr } = await colloquy(['export', '--out', out, '--db', db]);
    expect(code).toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toBe(`exported 7 messages to ${out}\n`);
    expect(parseLines(readFileSync(out, 'utf8'))).toHaveLength(7);
  });

  it('says in one line why it cannot write --out, and writes nothing', async () => {
    const out = dir.file('missing-folder/export.jsonl');
    const { code, stdout, stderr } = await colloquy(['export', '--out', out, '--db', db]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      `colloquy: cannot write ${out}: ENOENT: no such file or directory, open '${out}'\n`,
    );
  });

  it('never overwrites an existing --out file without --force', async () => {
    // Given a file that is already there
    const out = dir.file('kept.jsonl');
    writeFileSync(out, 'my earlier export\n');

    // When export is pointed at it without --force, then with it
    const refused = await colloquy(['export', '--out', out, '--db', db]);
    const kept = readFileSync(out, 'utf8');
    const forced = await colloquy(['export', '--out', out, '--force', '--db', db]);

    // Then the first run changes nothing and says how to replace it; the second replaces it
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`colloquy: ${out} already exists; pass --force to overwrite it\n`);
    expect(kept).toBe('my earlier export\n');
    expect(forced.code).toBe(0);
    expect(parseLines(readFileSync(out, 'utf8'))).toHaveLength(7);
  });

  it('rejects a format it does not know as a usage error', async () => {
    const { code, stderr } = await colloquy(['export', '--format', 'xml', '--db', db]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^colloquy: .*'xml'.*jsonl[^\n]*\n$/);
  });

  it('streams 20,000 messages with a throttled progress bar on stderr when --progress forces it', async () => {
    const out = dir.file('big.jsonl');
    const { code, stderr } = await colloquy(['export', '--progress', '--out', out, '--db', big]);
    expect(code).toBe(0);

    const lines = readFileSync(out, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(BIG);
    expect(JSON.parse(lines[BIG - 1] ?? '')).toMatchObject({
      content: `turn ${BIG - 1} of a long history`,
    });

    const redraws = stderr.split('\r').filter((part) => part.startsWith('exporting ['));
    expect(redraws.length).toBeGreaterThan(0);
    expect(redraws.length).toBeLessThan(200);
    expect(redraws.at(-1)).toMatch(/^exporting \[#+\] 20,000\/20,000 100%\n/);
    expect(stderr.trimEnd().split('\n').at(-1)).toBe(`exported 20,000 messages to ${out}`);
  });

  it('shows no progress bar when stderr is not a terminal, or with --no-progress', async () => {
    const quiet = await colloquy(['export', '--conversation', DM, '--db', db]);
    expect(quiet.stderr).toBe('exported 4 messages\n');
    const off = await colloquy(['export', '--no-progress', '--conversation', DM, '--db', db]);
    expect(off.stderr).toBe('exported 4 messages\n');
  });
});
