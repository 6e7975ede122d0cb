import { existsSync, statSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultDbPath } from '../../../db/default-store.js';
import { assertBinIsBuilt, colloquy, createEmpty, populate, tempDir } from './cli-harness.js';

const dir = tempDir();
const db = dir.file('bot.db');
const empty = dir.file('empty.db');

beforeAll(async () => {
  assertBinIsBuilt();
  await populate(db);
  await createEmpty(empty);
});
afterAll(() => dir.remove());

describe('colloquy (help, version, usage)', () => {
  it('prints its version', async () => {
    const { code, stdout } = await colloquy(['--version']);
    expect(code).toBe(0);
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('lists every command with examples in --help', async () => {
    const { code, stdout } = await colloquy(['--help']);
    expect(code).toBe(0);
    for (const command of ['sql', 'tail', 'conversations', 'export', 'stats', 'forget']) {
      expect(stdout).toContain(command);
    }
    expect(stdout).toContain('Examples:');
    expect(stdout).toContain('--db <path>');
  });

  it('shows examples in the help of a command', async () => {
    const { code, stdout } = await colloquy(['help', 'sql']);
    expect(code).toBe(0);
    expect(stdout).toContain('colloquy sql --json');
  });

  it('exits 2 with one line for an unknown command', async () => {
    const { code, stdout, stderr } = await colloquy(['frobnicate', '--db', db]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^colloquy: unknown command 'frobnicate'[^\n]*\n$/);
  });

  it('exits 2 with one line for an option value that is not a number', async () => {
    const { code, stderr } = await colloquy(['tail', '-n', 'lots', '--db', db]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^colloquy: .*'lots' is invalid[^\n]*\n$/);
  });
});

describe('colloquy: finding the database', () => {
  it('refuses a missing database with a hint, and does not create the file', async () => {
    const { code, stderr } = await colloquy(['stats'], { cwd: dir.path });
    expect(code).toBe(1);
    expect(stderr).toBe(
      'colloquy: no database at ./colloquy.db — start a bot first or pass --db / COLLOQUY_DB\n',
    );
    expect(existsSync(dir.file('colloquy.db'))).toBe(false);
  });

  it('names the missing file given by --db', async () => {
    const { code, stderr } = await colloquy(['tail', '--db', dir.file('nope.db')]);
    expect(code).toBe(1);
    expect(stderr).toContain(`no database at ${dir.file('nope.db')}`);
    expect(existsSync(dir.file('nope.db'))).toBe(false);
  });

  it('reads the database named by COLLOQUY_DB', async () => {
    const { code, stdout } = await colloquy(['sql', 'select count(*) as n from messages'], {
      env: { COLLOQUY_DB: db },
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/\b7\b/);
  });

  it('reads COLLOQUY_DB trimmed, and a blank one as unset, as the bot does', async () => {
    // Given COLLOQUY_DB with blanks around the path, when the CLI and the bot resolve it
    const padded = await colloquy(['sql', 'select count(*) as n from messages'], {
      env: { COLLOQUY_DB: ` ${db} ` },
    });
    // Then both use the path without them
    expect(padded.code).toBe(0);
    expect(padded.stdout).toMatch(/\b7\b/);
    expect(defaultDbPath({ COLLOQUY_DB: ` ${db} ` })).toBe(db);

    // Given a COLLOQUY_DB of blanks only, then both fall back to ./colloquy.db
    const blank = await colloquy(['stats'], { cwd: dir.path, env: { COLLOQUY_DB: '  ' } });
    expect(blank.code).toBe(1);
    expect(blank.stderr).toBe(
      'colloquy: no database at ./colloquy.db — start a bot first or pass --db / COLLOQUY_DB\n',
    );
    expect(defaultDbPath({ COLLOQUY_DB: '  ' })).toBe('./colloquy.db');
  });

  it('prefers --db over COLLOQUY_DB', async () => {
    const { code, stdout } = await colloquy(
      ['sql', '--db', empty, '--json', 'select count(*) as n from messages'],
      { env: { COLLOQUY_DB: db } },
    );
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual([{ n: 0 }]);
  });

  it('says in one line that a database from a newer colloquy cannot be read', async () => {
    const newer = dir.file('newer.db');
    await createEmpty(newer);
    const raw = new Database(newer);
    raw
      .prepare('insert into __drizzle_migrations (hash, created_at) values (?, ?)')
      .run('from-the-future', 4_102_444_800_000);
    raw.close();
    const { code, stderr } = await colloquy(['stats', '--db', newer]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^colloquy: .*newer version of colloquy[^\n]*\n$/);
  });

  it('asks for "colloquy migrate" on a database from an older colloquy', async () => {
    const older = dir.file('older.db');
    await createEmpty(older);
    const raw = new Database(older);
    raw.exec(
      'delete from __drizzle_migrations where created_at = (select max(created_at) from __drizzle_migrations)',
    );
    raw.close();
    const read = await colloquy(['tail', '--db', older]);
    expect(read.code).toBe(1);
    expect(read.stderr).toBe(
      `colloquy: ${older} uses an older colloquy schema; run "colloquy migrate" (or start the bot) to upgrade it\n`,
    );
  });

  it('describes a zero-byte file as an empty database, leaves it as it is, and migrate fills it', async () => {
    const zero = dir.file('zero.db');
    writeFileSync(zero, '');
    const read = await colloquy(['stats', '--db', zero]);
    expect(read.code).toBe(1);
    expect(read.stderr).toBe(
      `colloquy: ${zero} is an empty database with no conversations yet; start a bot on it, or run "colloquy migrate" to create the schema\n`,
    );
    expect(statSync(zero).size).toBe(0);

    expect((await colloquy(['migrate', '--db', zero])).code).toBe(0);
    const after = await colloquy([
      'sql',
      '--db',
      zero,
      '--json',
      'select count(*) as n from messages',
    ]);
    expect(JSON.parse(after.stdout)).toEqual([{ n: 0 }]);
  });

  it('migrates a current database without changing anything', async () => {
    const { code, stdout } = await colloquy(['migrate', '--db', empty]);
    expect(code).toBe(0);
    expect(stdout).toBe(`${empty} is up to date\n`);
  });

  it('says in one line that a file is not a database, with a stack only under COLLOQUY_DEBUG', async () => {
    const junk = dir.file('notes.txt');
    writeFileSync(junk, 'this is not sqlite, just a long enough line of text to look at\n');
    const plain = await colloquy(['stats', '--db', junk]);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toMatch(/^colloquy: .*not a SQLite database[^\n]*\n$/);

    const debug = await colloquy(['stats', '--db', junk], { env: { COLLOQUY_DEBUG: '1' } });
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/^colloquy: .*not a SQLite database/);
    expect(debug.stderr).toMatch(/\n\s+at /);
  });
});

describe('colloquy sql', () => {
  it('prints an aligned table with a row count', async () => {
    const { code, stdout } = await colloquy([
      'sql',
      '--db',
      db,
      'select kind, count(*) as participants from participants group by kind order by kind',
    ]);
    expect(code).toBe(0);
    expect(stdout).toBe(
      [
        'kind   participants',
        '-----  ------------',
        'agent             1',
        'user              2',
        '(2 rows)',
        '',
      ].join('\n'),
    );
  });

  it('prints rows as JSON objects with --json', async () => {
    const { code, stdout } = await colloquy([
      'sql',
      '--db',
      db,
      '--json',
      "select speaker, text from transcript where conversation_id = 'telegram:42' order by seq limit 2",
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual([
      { speaker: 'Alice', text: 'where is my order 1235?' },
      { speaker: 'Orders', text: 'It ships tomorrow.' },
    ]);
  });

  it('prints CSV with quoting and \\n line ends with --csv', async () => {
    const { code, stdout } = await colloquy([
      'sql',
      '--db',
      db,
      '--csv',
      "select content, null as missing from messages where id = 'telegram:42:3'",
    ]);
    expect(code).toBe(0);
    expect(stdout).toBe('content,missing\n"thanks!\nsee you",\n');
  });

  it('ends CSV lines with \\r\\n when asked with --crlf', async () => {
    const query = "select content, null as missing from messages where id = 'telegram:42:3'";
    const { code, stdout } = await colloquy(['sql', '--db', db, '--csv', '--crlf', query]);
    expect(code).toBe(0);
    expect(stdout).toBe('content,missing\r\n"thanks!\nsee you",\r\n');
  });

  it('refuses --crlf without --csv as a usage error', async () => {
    const { code, stderr } = await colloquy(['sql', '--db', db, '--crlf', 'select 1']);
    expect(code).toBe(2);
    expect(stderr).toBe('colloquy: --crlf goes with --csv\n');
  });

  it('runs every statement and prints the result of the last', async () => {
    const { code, stdout } = await colloquy([
      'sql',
      '--db',
      db,
      '--json',
      "select 1; -- a comment; with a semicolon\nselect ';' as semi, 2 as two;",
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual([{ semi: ';', two: 2 }]);
  });

  it('runs a trigger whose body holds semicolons as one statement', async () => {
    const copy = dir.file('trigger.db');
    await populate(copy);
    const { code, stdout } = await colloquy([
      'sql',
      '--db',
      copy,
      '--write',
      '--json',
      `create table audit (seq integer);
       create trigger audit_deletes after delete on messages begin
         insert into audit values (old.seq);
       end;
       delete from messages where seq = 2;
       select seq from audit;`,
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual([{ seq: 2 }]);
  });

  it('reads the query from stdin', async () => {
    const { code, stdout } = await colloquy(['sql', '--db', db, '--json'], {
      input: 'select count(*) as n from conversations;\n',
    });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual([{ n: 2 }]);
  });

  it('refuses to write without --write and leaves the database unchanged', async () => {
    const { code, stdout, stderr } = await colloquy(['sql', '--db', db, 'delete from messages']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe('colloquy: refusing to write without --write\n');
    const after = await colloquy([
      'sql',
      '--db',
      db,
      '--json',
      'select count(*) as n from messages',
    ]);
    expect(JSON.parse(after.stdout)).toEqual([{ n: 7 }]);
  });

  it('writes with --write, with foreign keys cascading as the store expects', async () => {
    const copy = dir.file('writable.db');
    await populate(copy);
    const { code, stdout } = await colloquy([
      'sql',
      '--db',
      copy,
      '--write',
      "delete from conversations where id = 'telegram:42'",
    ]);
    expect(code).toBe(0);
    // the conversation's row; a trigger deletes its turns and what they cascade to
    expect(stdout).toBe('1 row changed\n');
    const left = await colloquy([
      'sql',
      '--db',
      copy,
      '--json',
      'select count(*) as n from messages',
    ]);
    expect(JSON.parse(left.stdout)).toEqual([{ n: 3 }]);
  });

  it("reports bad SQL with SQLite's own message in one line", async () => {
    const { code, stdout, stderr } = await colloquy(['sql', '--db', db, 'select * from foo']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe('colloquy: no such table: foo\n');
  });

  it('refuses --json together with --csv as a usage error', async () => {
    const { code, stderr } = await colloquy(['sql', '--db', db, '--json', '--csv', 'select 1']);
    expect(code).toBe(2);
    expect(stderr).toBe('colloquy: pass either --json or --csv, not both\n');
  });
});

describe('colloquy on a fresh, empty database', () => {
  it('says there are no conversations yet', async () => {
    const { code, stdout } = await colloquy(['conversations', '--db', empty]);
    expect(code).toBe(0);
    expect(stdout).toBe('no conversations yet\n');
  });

  it('says there are no messages yet', async () => {
    const { code, stdout } = await colloquy(['tail', '--db', empty]);
    expect(code).toBe(0);
    expect(stdout).toBe('no messages yet\n');
  });

  it('reports zero counts in stats', async () => {
    const { code, stdout } = await colloquy(['stats', '--db', empty]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^messages\s+0$/m);
    expect(stdout).toContain('no conversations yet');
  });

  it('prints an empty table for a query with no rows', async () => {
    const { code, stdout } = await colloquy(['sql', '--db', empty, 'select id from messages']);
    expect(code).toBe(0);
    expect(stdout).toBe('id\n--\n(0 rows)\n');
  });
});
