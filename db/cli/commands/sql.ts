import type Database from 'better-sqlite3';
import type { FieldDef, Pool, QueryArrayResult } from 'pg';
import type { Command } from 'commander';
import { openDb } from '../database.js';
import { CliError, UsageError } from '../errors.js';
import { dbPathOf, print } from '../context.js';
import type { ResultSet } from '../format.js';
import { formatCsv, formatJson, formatTable } from '../format.js';
import { splitStatements } from '../split-sql.js';

interface SqlOptions {
  json?: boolean;
  csv?: boolean;
  crlf?: boolean;
  write?: boolean;
}

/** What the last statement gave: rows, or how many rows it changed. */
type Outcome = { rows: ResultSet } | { changes: number };

/**
 * `colloquy sql "<query>"`: runs SQL against the database and prints the last statement's
 * result. The file is opened read-only unless `--write` is given.
 */
export function registerSql(program: Command): void {
  program
    .command('sql')
    .description('run SQL and print the result of the last statement (read-only unless --write)')
    .argument('[query]', 'SQL to run; "-" or nothing reads it from stdin')
    .option('--json', 'print rows as a JSON array of objects')
    .option('--csv', 'print rows as CSV, lines ending with \\n')
    .option(
      '--crlf',
      'with --csv: end lines with \\r\\n, as RFC 4180 and spreadsheets on Windows expect',
    )
    .option('--write', 'open the database for writing and allow statements that change it')
    .addHelpText(
      'after',
      `
Examples:
  $ colloquy sql "select kind, count(*) from participants group by kind"
  $ colloquy sql --json "select * from messages order by seq desc limit 5"
  $ colloquy sql --csv --crlf "select * from participants" > people.csv
  $ colloquy sql --write "delete from conversations where id = 'telegram:42'"
  $ colloquy sql < report.sql`,
    )
    .action(async (query: string | undefined, options: SqlOptions, command: Command) => {
      if (options.json && options.csv)
        throw new UsageError('pass either --json or --csv, not both');
      if (options.crlf && !options.csv) throw new UsageError('--crlf goes with --csv');
      const text = await querySource(query);
      const write = options.write ?? false;
      const db = await openDb(dbPathOf(command), { write });
      try {
        const outcome =
          db.sqlite !== undefined
            ? runAll(db.sqlite, text, write)
            : await runOnPostgres(db.postgres!.pool, text, write);
        print(render(outcome, options));
      } finally {
        await db.close();
      }
    });
}

async function querySource(query: string | undefined): Promise<string> {
  if (query !== undefined && query !== '-') return query;
  if (process.stdin.isTTY) throw new UsageError('missing query: colloquy sql "<query>"');
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text;
}

/** Runs every statement in order and keeps the outcome of the last one. */
function runAll(db: Database.Database, sql: string, write: boolean): Outcome {
  const pieces = splitStatements(sql);
  if (pieces.length === 0) throw new UsageError('no SQL statement to run');
  let outcome: Outcome | undefined;
  let pending = '';
  for (const [i, piece] of pieces.entries()) {
    const text = pending + piece;
    let statement: Database.Statement;
    try {
      statement = db.prepare(text);
    } catch (error) {
      // A trigger body holds semicolons: keep joining pieces until SQLite sees it whole.
      if (isIncomplete(error) && i < pieces.length - 1) {
        pending = text;
        continue;
      }
      throw error;
    }
    pending = '';
    if (!statement.readonly && !write) throw new CliError('refusing to write without --write');
    outcome = runOne(statement);
  }
  if (outcome === undefined) throw new UsageError('no SQL statement to run');
  return outcome;
}

function runOne(statement: Database.Statement): Outcome {
  if (!statement.reader) return { changes: statement.run().changes };
  statement.safeIntegers(true);
  const columns = statement.columns().map((column) => column.name);
  const rows = statement.raw(true).all() as unknown[][];
  return { rows: { columns, rows } };
}

/**
 * Postgres: the whole text in one transaction (read-only unless `write`: Postgres itself then
 * refuses any change), as one simple query, so dollar-quoted bodies stay whole.
 */
async function runOnPostgres(pool: Pool, sql: string, write: boolean): Promise<Outcome> {
  if (splitStatements(sql).length === 0) throw new UsageError('no SQL statement to run');
  const { withClient } = await import('../../postgres/index.js');
  return withClient(pool, async (client) => {
    await client.query(write ? 'BEGIN' : 'BEGIN READ ONLY');
    let results: QueryArrayResult | QueryArrayResult[];
    try {
      results = (await client.query({ text: sql, rowMode: 'array' })) as typeof results;
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      if ((error as { code?: unknown }).code === '25006') {
        throw new CliError('refusing to write without --write', { cause: error });
      }
      throw error;
    }
    const last = Array.isArray(results) ? results.at(-1) : results;
    if (last === undefined) throw new UsageError('no SQL statement to run');
    if (last.fields.length === 0) return { changes: last.rowCount ?? 0 };
    return { rows: { columns: last.fields.map((field: FieldDef) => field.name), rows: last.rows } };
  });
}

function isIncomplete(error: unknown): boolean {
  return error instanceof Error && /incomplete input/.test(error.message);
}

function render(outcome: Outcome, options: SqlOptions): string {
  const csv = { lineEnd: options.crlf ? ('\r\n' as const) : ('\n' as const) };
  if ('changes' in outcome) {
    if (options.json) return JSON.stringify({ changes: outcome.changes });
    if (options.csv) return formatCsv({ columns: ['changes'], rows: [[outcome.changes]] }, csv);
    return `${outcome.changes} ${outcome.changes === 1 ? 'row' : 'rows'} changed`;
  }
  if (options.json) return formatJson(outcome.rows);
  if (options.csv) return formatCsv(outcome.rows, csv);
  return formatTable(outcome.rows);
}
