import type { Command } from 'commander';
import { isPostgresUrl } from '../../default-store.js';
import { assertDatabaseExists, openSql } from '../database.js';
import { note, print } from '../context.js';
import { UsageError } from '../errors.js';
import { formatCount } from '../format.js';
import { ProgressBar } from '../progress.js';

interface CopyOptions {
  from: string;
  to: string;
  progress?: boolean;
}

/**
 * `colloquy copy --from <file> --to <postgres url>`: moves a SQLite history into Postgres (the
 * move to several instances). Safe to run again: what is there already stays as it is.
 */
export function registerCopy(program: Command): void {
  program
    .command('copy')
    .description('copy a SQLite history into a Postgres database (again: copies only what is new)')
    .requiredOption('--from <file>', 'the SQLite file')
    .requiredOption('--to <url>', 'the Postgres database, postgres://…')
    .option('--progress', 'show a progress bar on stderr (default: when stderr is a terminal)')
    .option('--no-progress', 'never show a progress bar')
    .addHelpText(
      'after',
      `
Example:
  $ colloquy copy --from ./colloquy.db --to postgres://bot@db.internal/colloquy`,
    )
    .action(async (options: CopyOptions) => {
      if (!isPostgresUrl(options.to)) {
        throw new UsageError(`--to must be a postgres:// URL, not ${JSON.stringify(options.to)}`);
      }
      if (isPostgresUrl(options.from)) {
        throw new UsageError('--from must be a SQLite file (copy moves SQLite to Postgres)');
      }
      assertDatabaseExists(options.from);
      const { PostgresConversationStore, copyFromSqlite } = await import('../../postgres/index.js');
      const from = await openSql(options.from);
      const to = await PostgresConversationStore.open({ connectionString: options.to, max: 2 });
      try {
        const total = (from.prepare('SELECT count(*) FROM messages').pluck().get() as number) ?? 0;
        const showProgress = options.progress ?? process.stderr.isTTY === true;
        const bar = showProgress ? new ProgressBar(process.stderr, total, 'copying') : undefined;
        const report = await copyFromSqlite(from, to.pool, (n) => bar?.tick(n));
        bar?.finish();
        const { copied, present } = report.messages;
        print(
          `copied ${formatCount(copied)} ${copied === 1 ? 'message' : 'messages'} to ${to.where}` +
            (present > 0 ? ` (${formatCount(present)} there already)` : ''),
        );
        note(
          `${formatCount(report.participants)} participants, ${formatCount(report.conversations)} ` +
            `conversations, ${formatCount(report.mentions)} mentions, ${formatCount(report.revisions)} ` +
            `revisions, ${formatCount(report.runs)} agent runs added`,
        );
      } finally {
        from.close();
        await to.close();
      }
    });
}
