import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { migrationsFolder } from 'colloquy/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBinIsBuilt, colloquy, createEmpty, populate, tempDir } from './cli-harness.js';

const dir = tempDir();
beforeAll(() => assertBinIsBuilt());
afterAll(() => dir.remove());

interface Journal {
  entries: { tag: string }[];
}

/** A database written by an older colloquy: every migration but the last `missing`. */
function olderDatabase(path: string, missing: number): string[] {
  const folder = migrationsFolder();
  const journal = JSON.parse(readFileSync(join(folder, 'meta/_journal.json'), 'utf8')) as Journal;
  const old = join(dir.path, `migrations-${missing}`);
  mkdirSync(join(old, 'meta'), { recursive: true });
  for (const file of readdirSync(folder)) {
    if (file.endsWith('.sql')) copyFileSync(join(folder, file), join(old, file));
  }
  const kept = journal.entries.slice(0, journal.entries.length - missing);
  writeFileSync(join(old, 'meta/_journal.json'), JSON.stringify({ ...journal, entries: kept }));
  const db = new Database(path);
  migrate(drizzle(db), { migrationsFolder: old });
  db.close();
  return journal.entries.slice(kept.length).map((entry) => entry.tag);
}

describe('colloquy migrate', () => {
  it('names each migration it applied, then finds nothing more to do', async () => {
    // Given a file two migrations behind
    const path = dir.file('older.db');
    const missing = olderDatabase(path, 2);
    expect(missing).toHaveLength(2);

    // When it is migrated, twice
    const first = await colloquy(['migrate', '--db', path]);
    const second = await colloquy(['migrate', '--db', path]);

    // Then the first run says what it applied and the second that there was nothing to do
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(
      `${missing.map((tag) => `applied migration ${tag}\n`).join('')}${path} is now up to date\n`,
    );
    expect(second.stdout).toBe(`${path} is up to date\n`);
  });

  it('restores a dropped transcript view, keeping the turns', async () => {
    // Given a database with turns whose transcript view someone dropped
    const path = dir.file('dropped-view.db');
    await populate(path);
    const raw = new Database(path);
    raw.exec('DROP VIEW transcript');
    raw.close();
    const broken = await colloquy(['sql', '--db', path, 'select count(*) from transcript']);
    expect(broken.code).toBe(1);

    // When it is migrated
    const { code, stdout } = await colloquy(['migrate', '--db', path]);

    // Then it says it restored the view, and the view reads the turns again
    expect(code).toBe(0);
    expect(stdout).toBe(`restored view transcript\n${path} is now up to date\n`);
    const after = await colloquy([
      'sql',
      '--db',
      path,
      '--json',
      'select count(*) as n from transcript',
    ]);
    expect(JSON.parse(after.stdout)).toEqual([{ n: 7 }]);
  });

  it('restores a dropped message_search view, which finds turns by their words again', async () => {
    // Given a database whose message_search view someone dropped
    const path = dir.file('dropped-search.db');
    await populate(path);
    const raw = new Database(path);
    const query = `SELECT count(*) FROM message_search WHERE message_search MATCH 'order'`;
    const hits = raw.prepare(query).pluck().get();
    raw.exec('DROP VIEW message_search');
    raw.close();

    // When it is migrated
    const { code, stdout } = await colloquy(['migrate', '--db', path]);

    // Then the view finds the same turns, with their speakers
    expect(code).toBe(0);
    expect(stdout).toBe(`restored view message_search\n${path} is now up to date\n`);
    const db = new Database(path);
    try {
      expect(hits).toBeGreaterThan(0);
      expect(db.prepare(query).pluck().get()).toBe(hits);
    } finally {
      db.close();
    }
  });

  it('creates no database where there is none', async () => {
    const path = dir.file('none.db');
    const { code, stderr } = await colloquy(['migrate', '--db', path]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^colloquy: no database at /);
  });

  it('says a current database is up to date', async () => {
    const path = dir.file('current.db');
    await createEmpty(path);
    const { code, stdout } = await colloquy(['migrate', '--db', path]);
    expect(code).toBe(0);
    expect(stdout).toBe(`${path} is up to date\n`);
  });
});
