/**
 * An experiment, not a target: the writes bench on the store as it is and on the store with a
 * search index that keeps no per-turn sizes (FTS5 `columnsize = 0`, words deleted with FTS5's
 * 'delete' command instead of `contentless_delete`), alternating; then what that costs FTS5's
 * `rank` (bm25), which the studio's search and docs/sql.md's search examples order by.
 * docs/benchmarks.md ("A search index without sizes") has its results.
 *
 *   npx tsx test/bench/search-sizes.ts [--rounds 2] [--dir path]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { searchWords } from '../../src/search-words.js';
import { Corpus } from './corpus.js';
import { benchWrites } from './writes.js';

const TOKENIZE = `tokenize = 'unicode61 remove_diacritics 2'`;
const rowid = (conversation: string, seq: string) =>
  `(${conversation} << 32) | (4294967295 - ${seq})`;
const deleteWords = (conversation: string, seq: string, content: string) =>
  `INSERT INTO messages_fts (messages_fts, rowid, content) SELECT 'delete', ${rowid(conversation, seq)}, ${content}`;
/** The trigger statement indexing the words of the turn `row` (`new` or `old`) names. */
const turnWords = (row: 'new' | 'old', remove: boolean) => `${
  remove
    ? deleteWords('c.number', `${row}.seq`, `${row}.content`)
    : `INSERT INTO messages_fts (rowid, content) SELECT ${rowid('c.number', `${row}.seq`)}, ${row}.content`
}
      FROM conversation_rows c WHERE c.id = ${row}.conversation_id;`;

/**
 * The store's search index rebuilt without sizes, with triggers that give FTS5 the indexed text
 * back to delete a turn's words (a contentless table without `contentless_delete` needs it).
 */
export function withoutSizes(db: Database.Database): void {
  db.exec(`
    DROP TRIGGER messages_fts_after_insert;
    DROP TRIGGER messages_fts_after_delete;
    DROP TRIGGER messages_fts_after_update;
    DROP TRIGGER conversations_fts_before_delete;
    DROP TABLE messages_fts;
    CREATE VIRTUAL TABLE messages_fts USING fts5(content, content = '', columnsize = 0, ${TOKENIZE});
    INSERT INTO messages_fts (rowid, content)
      SELECT ${rowid('c.number', 'm.seq')}, m.content
      FROM conversation_rows c JOIN messages m ON m.conversation_id = c.id ORDER BY 1;
    CREATE TRIGGER messages_fts_after_insert AFTER INSERT ON messages BEGIN
      ${turnWords('new', false)}
    END;
    CREATE TRIGGER messages_fts_after_delete AFTER DELETE ON messages BEGIN
      ${turnWords('old', true)}
    END;
    CREATE TRIGGER messages_fts_after_update AFTER UPDATE OF content, conversation_id ON messages
    BEGIN
      ${turnWords('old', true)}
      ${turnWords('new', false)}
    END;
    CREATE TRIGGER conversations_fts_before_delete BEFORE DELETE ON conversation_rows BEGIN
      ${deleteWords('old.number', 'm.seq', 'm.content')}
      FROM messages m WHERE m.conversation_id = old.id;
    END;
  `);
}

/**
 * How far `ORDER BY rank LIMIT 20` moves without sizes: the same turns in both indexes, one
 * word of each frequency, and how many of the 20 best both give.
 */
function rankCost(turns: number): void {
  const db = new Database(':memory:');
  db.exec(`
    CREATE VIRTUAL TABLE sized USING fts5(content, content = '', contentless_delete = 1, ${TOKENIZE});
    CREATE VIRTUAL TABLE unsized USING fts5(content, content = '', columnsize = 0, ${TOKENIZE});
  `);
  const counts = new Map<string, number>();
  const insert = ['sized', 'unsized'].map((t) =>
    db.prepare(`INSERT INTO ${t} (rowid, content) VALUES (?, ?)`),
  );
  db.transaction(() => {
    for (const [i, turn] of new Corpus({ seed: 12 }).take(turns).entries()) {
      for (const statement of insert) statement.run(i + 1, turn.content);
      for (const word of new Set(searchWords(turn.content))) {
        counts.set(word, (counts.get(word) ?? 0) + 1);
      }
    }
  })();
  const byFrequency = [...counts].sort((a, b) => b[1] - a[1]);
  console.log(
    `\n── FTS5 rank without sizes: the 20 best of ${turns.toLocaleString('en')} turns ──`,
  );
  for (const place of [5, 50, 200, 1000, 3000]) {
    const [word, found] = byFrequency[place]!;
    const best = (table: string) =>
      db
        .prepare(`SELECT rowid FROM ${table} WHERE ${table} MATCH ? ORDER BY rank LIMIT 20`)
        .pluck()
        .all(`"${word}"`) as number[];
    const sized = best('sized');
    const unsized = new Set(best('unsized'));
    const both = sized.filter((id) => unsized.has(id)).length;
    console.log(`  "${word}" (in ${found} turns): ${both} of the 20 best in both`);
  }
  db.close();
}

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '2' }, dir: { type: 'string' } },
});
const dir = values.dir ?? mkdtempSync(join(tmpdir(), 'colloquy-search-sizes-'));
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    const variants = [
      { name: 'the store as it is', alter: undefined },
      { name: 'the search index without sizes', alter: withoutSizes },
    ];
    for (const { name, alter } of round % 2 === 0 ? variants : variants.reverse()) {
      console.log(`\n════ round ${round + 1}: ${name} ════`);
      await benchWrites({ dir, ...(alter === undefined ? {} : { alter }) });
    }
  }
  rankCost(100_000);
} finally {
  if (values.dir === undefined) rmSync(dir, { recursive: true, force: true });
}
