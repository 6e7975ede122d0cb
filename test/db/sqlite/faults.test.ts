import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { colloquy } from '../cli/cli-harness.js';
import {
  buildIfStale,
  consoleBot,
  root,
  startConsoleBot,
} from '../../channels/console/bot.fixtures.js';

// Faults on real files: a database the process cannot write, one damaged while the bot runs,
// and the dead letters `colloquy import` writes back.

beforeAll(() => buildIfStale(), 180_000);

/**
 * Root writes any file whatever its mode, so as root the bot runs without the capabilities
 * that override file modes (`setpriv` drops them from its bounding set): it feels the modes
 * as any user does, and still reads the checkout it owns, however private that is.
 */
const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const WITHOUT_OVERRIDES = ['--bounding-set=-dac_override,-dac_read_search,-fowner', '--'];
const cannotDrop = asRoot ? whyRootCannotFeelModes() : undefined;
if (cannotDrop !== undefined && process.env.CI === 'true') {
  throw new Error(`the permission tests cannot run as root here: ${cannotDrop}`);
}

/** Undefined when `setpriv` can start node without the mode-overriding capabilities. */
function whyRootCannotFeelModes(): string | undefined {
  const probe = spawnSync('setpriv', [...WITHOUT_OVERRIDES, process.execPath, '-e', ''], {
    encoding: 'utf8',
  });
  if (probe.error) return `setpriv (util-linux) does not start: ${probe.error.message}`;
  if (probe.status !== 0) return `setpriv cannot drop capabilities: ${probe.stderr.trim()}`;
  return undefined;
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'colloquy-faults-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A colloquy database at `dir/name`, closed. */
async function database(name = 'colloquy.db'): Promise<string> {
  const path = join(dir, name);
  const store = SqliteConversationStore.open(path);
  await store.close();
  return path;
}

/** Runs the built console bot on `db` with empty input; its exit code and stderr. */
function startOn(db: string): Promise<{ code: number | null; stderr: string }> {
  const [command, args] = asRoot
    ? ['setpriv', [...WITHOUT_OVERRIDES, process.execPath, consoleBot]]
    : [process.execPath, [consoleBot]];
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, COLLOQUY_DB: db, COLLOQUY_MODEL: '' },
  });
  child.stdin.end();
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

const skipReason = `as root, the bot must run without CAP_DAC_OVERRIDE to feel file modes: ${cannotDrop}`;
describe(
  'a database the bot cannot write',
  { skip: cannotDrop !== undefined, meta: { skipReason } },
  () => {
    const refusal = /^colloquy: cannot write the colloquy database at .*; check the permissions/m;

    it('refuses a read-only file with one line and exit code 1', async () => {
      const db = await database();
      chmodSync(db, 0o444);
      const { code, stderr } = await startOn(db);
      expect(code).toBe(1);
      expect(stderr).toMatch(refusal);
      expect(stderr).not.toMatch(/capturing into/);
    });

    it('refuses a read-only -shm file', async () => {
      const db = await database();
      writeFileSync(`${db}-shm`, Buffer.alloc(32768));
      chmodSync(`${db}-shm`, 0o444);
      const { code, stderr } = await startOn(db);
      expect(code).toBe(1);
      expect(stderr).toMatch(refusal);
    });

    it.runIf(asRoot)('refuses a file another user owns', async () => {
      const db = await database();
      chownSync(db, NOBODY, NOBODY);
      chmodSync(db, 0o644);
      const { code, stderr } = await startOn(db);
      expect(code).toBe(1);
      expect(stderr).toMatch(refusal);
    });
  },
);

describe('a database damaged while the bot runs', () => {
  for (const [how, damage] of [
    [
      'overwritten',
      (db: string) => {
        const fd = openSync(db, 'r+');
        writeSync(fd, Buffer.alloc(4096, 7), 0, 4096, 0);
        closeSync(fd);
      },
    ],
    [
      'replaced',
      (db: string) => {
        rmSync(db);
        writeFileSync(db, 'not a database');
      },
    ],
  ] as const) {
    it(`reports a file ${how} at once, keeps the turn as a dead letter, exits 1, and import writes it back`, async () => {
      // given the console bot answering on a sound file
      const db = join(dir, 'chat.db');
      const bot = startConsoleBot({ COLLOQUY_DB: db, COLLOQUY_USER_NAME: 'Ada' });
      await bot.say('hello', 1);

      // when the file is damaged and a person writes again
      damage(db);
      bot.child.stdin.write('are you there?\n');
      await waitFor(() => bot.stderr().includes('[StoreError]'));
      bot.child.stdin.end();

      // then the failure was reported at once, and the process exits 1
      expect(bot.stderr()).toMatch(
        new RegExp(
          `\\[StoreError\\].*${how === 'replaced' ? 'was replaced' : 'no longer a SQLite database'}`,
        ),
      );
      expect(await bot.exited).toBe(1);
      expect(bot.stderr()).toMatch(/writes could not be stored: kept in .*dead-letter\.jsonl/);

      // and the turn is in the dead-letter file beside the database
      const letters = readFileSync(`${db}.dead-letter.jsonl`, 'utf8').trim().split('\n');
      const contents = letters.map(
        (l) => (JSON.parse(l) as { op: { message?: { content: string } } }).op.message?.content,
      );
      expect(contents).toContain('are you there?');

      // and `colloquy import` writes it into a sound database, once however often it runs
      const restored = join(dir, 'restored.db');
      await (await Promise.resolve(SqliteConversationStore.open(restored))).close();
      const first = await colloquy(['import', '--db', restored, `${db}.dead-letter.jsonl`]);
      expect(first.code).toBe(0);
      const again = await colloquy(['import', '--db', restored, `${db}.dead-letter.jsonl`]);
      expect(again.stdout).toMatch(/0 written, \d+ already stored/);
      const store = SqliteConversationStore.open(restored);
      const turns = await store.get('console:local');
      await store.close();
      expect(turns.map((t) => t.content)).toContain('are you there?');
      expect(turns.filter((t) => t.content === 'are you there?')).toHaveLength(1);
    }, 60_000);
  }
});

describe('colloquy import', () => {
  it('writes a dead-letter file back into the database beside it, turns, edits and deletions', async () => {
    // given a database and a dead-letter file beside it, as a bot leaves them
    const db = await database('bot.db');
    const turn = {
      id: 'telegram:42:7',
      conversationId: 'telegram:42',
      participant: { kind: 'user', id: 'telegram:1001', displayName: 'Alice' },
      content: 'where is my order?',
      timestamp: '2026-03-01T10:00:00.000Z',
      scope: 'dm',
      metadata: { channelType: 'telegram', channelId: '42', messageId: '7', mentions: [] },
    };
    const ref = { channelType: 'telegram', channelId: '42', messageId: '7' };
    const ops = [
      { kind: 'append', message: turn },
      {
        kind: 'edit',
        edit: { ...ref, content: 'where is order 42?', editedAt: '2026-03-01T10:01:00.000Z' },
      },
    ];
    const file = `${db}.dead-letter.jsonl`;
    writeFileSync(
      file,
      ops
        .map((op) =>
          JSON.stringify({
            op,
            reason: 'unwritten',
            error: 'locked',
            at: '2026-03-01T10:02:00.000Z',
          }),
        )
        .join('\n') + '\n',
    );

    // when it is imported twice, without --db
    const first = await colloquy(['import', file]);
    const second = await colloquy(['import', file]);

    // then the turn and its edit are stored once, with one revision
    expect(first).toMatchObject({ code: 0 });
    expect(first.stdout).toContain(`${db}: 2 written, 0 already stored`);
    expect(second.stdout).toContain('1 already stored');
    const store = SqliteConversationStore.open(db);
    const [stored] = await store.get('telegram:42');
    const revisions = store.db.prepare('SELECT count(*) FROM message_revisions').pluck().get();
    await store.close();
    expect(stored).toMatchObject({ content: 'where is order 42?' });
    expect(revisions).toBe(1);
    expect(existsSync(file)).toBe(true);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
