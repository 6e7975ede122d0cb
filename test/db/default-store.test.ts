import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { resolveDbPath } from '../../db/default-store.js';
import { colloquy, populate } from './cli/cli-harness.js';
import { buildIfStale, startConsoleBot } from '../channels/console/bot.fixtures.js';
import { tempDirs } from '../fixtures/temp-dirs.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

beforeAll(() => buildIfStale(), 180_000);
const temp = tempDirs();

/** A fresh directory to play the user's home folder. */
function home(): string {
  return temp.make('home');
}

/** Another application's SQLite file: one table of its own, in rollback-journal mode. */
function otherApplicationsFile(path: string): void {
  const db = new Database(path);
  db.exec(
    "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'x')",
  );
  db.close();
}

/** Every bad COLLOQUY_DB a newcomer runs into, and a word the one line must contain. */
function badDatabases(): { what: string; path: string; says: RegExp; cli: RegExp }[] {
  const dir = home();
  const text = join(dir, 'notes.db');
  writeFileSync(text, 'these are my notes, not a database\n'.repeat(200));
  const other = join(dir, 'other-app.db');
  otherApplicationsFile(other);
  return [
    { what: 'a directory', path: dir, says: /is a directory/, cli: /not a database file/ },
    {
      what: 'a missing folder',
      path: join(dir, 'missing', 'chat.db'),
      says: /does not exist/,
      cli: /no database at/,
    },
    {
      what: 'a file that is not SQLite',
      path: text,
      says: /not a SQLite database/,
      cli: /not a SQLite database/,
    },
    {
      what: "another application's SQLite file",
      path: other,
      says: /not a colloquy database/,
      cli: /not a colloquy database/,
    },
  ];
}

describe('COLLOQUY_DB as the user types it', () => {
  it('expands a leading ~ to the home folder, and only a leading one', () => {
    expect(resolveDbPath(undefined, { COLLOQUY_DB: '~/bots/x.db' })).toBe(
      join(homedir(), 'bots/x.db'),
    );
    expect(resolveDbPath('~', {})).toBe(homedir());
    expect(resolveDbPath(undefined, { COLLOQUY_DB: ' ~/x.db ' })).toBe(join(homedir(), 'x.db'));
    expect(resolveDbPath('a/~/x.db', {})).toBe('a/~/x.db');
    expect(resolveDbPath('~other/x.db', {})).toBe('~other/x.db');
  });

  it('console bot: writes ~/chat.db in the home folder', async () => {
    const dir = home();
    const bot = startConsoleBot({ HOME: dir, COLLOQUY_DB: '~/chat.db' });
    await bot.say('hello', 1);
    bot.child.stdin.end();
    expect(await bot.exited).toBe(0);
    expect(existsSync(join(dir, 'chat.db'))).toBe(true);
    expect(bot.stderr()).toContain(join(dir, 'chat.db'));
  });

  it('the CLI: reads ~/x.db from --db and from COLLOQUY_DB', async () => {
    const dir = home();
    await populate(join(dir, 'x.db'));
    const flag = await colloquy(['stats', '--json', '--db', '~/x.db'], { env: { HOME: dir } });
    expect(flag.stderr).toBe('');
    expect(flag.code).toBe(0);
    const env = await colloquy(['stats', '--json'], { env: { HOME: dir, COLLOQUY_DB: '~/x.db' } });
    expect(env.code).toBe(0);
    expect(env.stdout).toBe(flag.stdout);
  });

  it('telegram example: opens ~/t.db in the home folder', async () => {
    const dir = home();
    // The API root is a closed port: the bot opens its store, then cannot reach Telegram.
    const { code, output } = await example('telegram-bot.ts', {
      HOME: dir,
      COLLOQUY_DB: '~/t.db',
      TELEGRAM_BOT_TOKEN: '123456:ABC',
      TELEGRAM_API_ROOT: 'http://127.0.0.1:9',
    });
    expect(code).toBe(1);
    expect(output).toMatch(/^Could not start: [^\n]*\n$/);
    expect(existsSync(join(dir, 't.db'))).toBe(true);
  });
});

describe('a bad COLLOQUY_DB gets one line, never a stack trace', () => {
  for (const { what, path, says, cli } of badDatabases()) {
    it(`console bot: ${what}`, async () => {
      const before = existsSync(path) && statSync(path).isFile() ? readFileSync(path) : undefined;
      const bot = startConsoleBot({ COLLOQUY_DB: path });
      bot.child.stdin.end();
      expect(await bot.exited).toBe(1);
      expect(bot.stderr()).toMatch(/^colloquy: [^\n]*\n$/);
      expect(bot.stderr()).toContain(path);
      expect(bot.stderr()).toMatch(says);
      if (before !== undefined) {
        // The file is left exactly as it was (no tables added, no switch to WAL).
        expect(existsSync(path) && readFileSync(path).equals(before)).toBe(true);
      }
    });

    it(`telegram example: ${what}`, async () => {
      const { code, output } = await example('telegram-bot.ts', {
        COLLOQUY_DB: path,
        TELEGRAM_BOT_TOKEN: '123456:ABC',
        TELEGRAM_API_ROOT: 'http://127.0.0.1:9',
      });
      expect(code).toBe(1);
      expect(output).toMatch(/^Could not start: [^\n]*\n$/);
      expect(output).toMatch(says);
    });

    it(`the CLI: ${what}`, async () => {
      const { code, stderr } = await colloquy(['stats', '--db', path]);
      expect(code).toBe(1);
      expect(stderr).toMatch(/^colloquy: [^\n]*\n$/);
      expect(stderr).toMatch(cli);
    });
  }
});

/** Runs an example with these settings (and nothing else from this environment). */
async function example(file: string, env: Record<string, string>) {
  mkdirSync(join(ROOT, '.vitest-tmp'), { recursive: true });
  return run(process.execPath, ['--import', 'tsx', `examples/${file}`], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 30_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code,
      output: `${error.stdout ?? ''}${error.stderr ?? ''}`,
    }),
  );
}
