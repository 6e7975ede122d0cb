import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { ClientBase, FieldDef, Pool, QueryArrayResult } from 'pg';
import type { Command } from 'commander';
import { openDb } from '../database.js';
import { CliError, UsageError } from '../errors.js';
import { dbPathOf, print } from '../context.js';
import type { ResultSet } from '../format.js';
import { formatCsv, formatJson, formatTable } from '../format.js';
import { leadingWords, splitPostgresStatements, splitStatements } from '../split-sql.js';

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
 * result. Without `--write` the file is opened read-only, and Postgres runs the text in a
 * read-only transaction it cannot leave (see `runOnPostgres`).
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
  $ colloquy sql < report.sql

Without --write a SQLite file is opened read-only. On Postgres the text runs in one read-only
transaction it cannot leave: BEGIN, COMMIT, ROLLBACK, END, ABORT, SET TRANSACTION and SET
SESSION CHARACTERISTICS are refused, and each statement is sent on its own.`,
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
 * Postgres. With `write`, the whole text in one transaction, as one simple query. Without it,
 * the text runs in a read-only transaction it cannot leave: the session defaults to read-only,
 * a first query fixes the transaction's mode (Postgres refuses `SET TRANSACTION READ WRITE`
 * after it), statements that would end or reconfigure the transaction are refused before
 * anything runs, and each statement is sent on its own through the extended protocol, which
 * takes exactly one statement, so none can hide behind another; after each, the run checks it
 * is still in its read-only transaction before it sends the next.
 */
async function runOnPostgres(pool: Pool, sql: string, write: boolean): Promise<Outcome> {
  const pieces = splitPostgresStatements(sql);
  if (pieces.length === 0) throw new UsageError('no SQL statement to run');
  if (!write) refuseTransactionControl(pieces);
  const statements = write ? [sql] : pieces;
  const { withClient } = await import('../../postgres/index.js');
  return withClient(pool, async (client) => {
    const run = randomUUID();
    if (!write) await client.query('SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY');
    await client.query(
      write ? 'BEGIN' : `BEGIN READ ONLY; SET LOCAL colloquy.read_only_run = '${run}'; SELECT 1`,
    );
    let last: QueryArrayResult | undefined;
    try {
      for (const text of statements) {
        const results = (await client.query({
          text,
          rowMode: 'array',
          ...(write ? {} : { queryMode: 'extended' as const }),
        })) as QueryArrayResult | QueryArrayResult[];
        last = Array.isArray(results) ? results.at(-1) : results;
        if (!write) await stillReadOnly(client, run);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      if ((error as { code?: unknown }).code === '25006') {
        throw new CliError('refusing to write without --write', { cause: error });
      }
      throw error;
    }
    if (last === undefined) throw new UsageError('no SQL statement to run');
    if (last.fields.length === 0) return { changes: last.rowCount ?? 0 };
    return { rows: { columns: last.fields.map((field: FieldDef) => field.name), rows: last.rows } };
  });
}

/**
 * Throws unless the client is still in the read-only transaction `run` opened: whatever the
 * text hid from `refuseTransactionControl`, the next statement never runs outside it (the
 * setting `SET LOCAL` gave it ends with the transaction).
 */
export async function stillReadOnly(client: ClientBase, run: string): Promise<void> {
  const { rows } = await client.query<{ run: string | null; readOnly: string }>(
    `SELECT current_setting('colloquy.read_only_run', true) AS run,
      current_setting('transaction_read_only') AS "readOnly"`,
  );
  if (rows[0]?.run !== run || rows[0].readOnly !== 'on') {
    throw new CliError(
      'refusing the rest of the text without --write: it left its read-only transaction',
    );
  }
}

/** Statements that end the transaction or set its mode: what a read-only run refuses. */
const TRANSACTION_CONTROL =
  /^(begin|start|commit|end|rollback|abort|prepare transaction|set transaction|set session characteristics)\b/;

function refuseTransactionControl(statements: readonly string[]): void {
  for (const statement of statements) {
    const control = TRANSACTION_CONTROL.exec(leadingWords(statement, 3));
    if (control !== null) {
      throw new CliError(
        `refusing "${control[0]}" without --write: the text runs in one read-only transaction`,
      );
    }
  }
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
