import { createRequire } from 'node:module';
import { Command } from 'commander';
import { DEFAULT_DB_PATH } from '../default-store.js';
import { oneLine } from '../../src/errors.js';
import { registerConversations } from './commands/conversations.js';
import { registerCopy } from './commands/copy.js';
import { registerExport } from './commands/export.js';
import { registerForget } from './commands/forget.js';
import { registerImport } from './commands/import.js';
import { registerMigrate } from './commands/migrate.js';
import { registerSearch } from './commands/search.js';
import { registerSql } from './commands/sql.js';
import { registerStats } from './commands/stats.js';
import { registerStudio } from './commands/studio.js';
import { registerTail } from './commands/tail.js';
import { registerTry } from './commands/try.js';

/**
 * The `colloquy` command line: every command, the global `--db` option, help and version.
 * Commander is told to throw instead of exiting so `run` decides the exit code.
 *
 * @example
 * ```ts
 * await createProgram().parseAsync(['node', 'colloquy', 'stats']);
 * ```
 */
export function createProgram(): Command {
  const program = new Command('colloquy')
    .description('Query the conversations your colloquy bots recorded.')
    .version(packageVersion(), '-V, --version', 'print the colloquy version')
    .option(
      '--db <path>',
      `SQLite file or postgres:// URL (default: $COLLOQUY_DB, else ${DEFAULT_DB_PATH})`,
    )
    .helpCommand('help [command]', 'show help for a command')
    .showSuggestionAfterError()
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({
      outputError: (text, write) => write(`colloquy: ${oneLine(text.replace(/^error: /, ''))}\n`),
    })
    .exitOverride()
    .addHelpText(
      'after',
      `
Examples:
  $ colloquy conversations                       # newest activity first
  $ colloquy tail --follow                       # watch turns arrive
  $ colloquy sql "select speaker, text from transcript limit 20"
  $ colloquy sql --csv "select * from participants" > people.csv
  $ colloquy search refund --conversation telegram:5551002  # best first
  $ colloquy export --format jsonl --out backup.jsonl
  $ COLLOQUY_DB=/var/lib/bot.db colloquy stats
  $ colloquy forget telegram:1001 --yes          # a data-protection request
  $ colloquy studio                              # look through it all in a browser
  $ colloquy import colloquy.db.dead-letter.jsonl  # turns a bot could not store
  $ colloquy copy --from colloquy.db --to postgres://bot@db/colloquy  # move to Postgres
  $ colloquy try telegram                        # a fake Telegram and the example bot

Errors print one line and exit 1 (2 for a wrong command line); COLLOQUY_DEBUG=1 adds stacks.`,
    );
  for (const register of [
    registerSql,
    registerSearch,
    registerTail,
    registerConversations,
    registerExport,
    registerStats,
    registerForget,
    registerStudio,
    registerMigrate,
    registerImport,
    registerCopy,
    registerTry,
  ]) {
    register(program);
  }
  for (const command of program.commands) command.exitOverride();
  return program;
}

function packageVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('colloquy/package.json') as { version: string }).version;
}
