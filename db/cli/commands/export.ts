import { once } from 'node:events';
import { createWriteStream, openSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Command } from 'commander';
import { Option } from 'commander';
import { openDb } from '../database.js';
import { dbPathOf, note } from '../context.js';
import { CliError } from '../errors.js';
import { countMessages, iterateMessages } from '../export-rows.js';
import { formatCount } from '../format.js';
import { ProgressBar } from '../progress.js';
import { assertConversationExists } from '../transcript.js';

interface ExportOptions {
  format: 'jsonl';
  conversation?: string;
  out?: string;
  force?: boolean;
  progress?: boolean;
}

/** Lines are gathered into chunks of about this many characters before each write. */
const CHUNK_CHARS = 64 * 1024;

/**
 * `colloquy export --format jsonl`: one JSON object per message, streamed from the
 * database to stdout or a file with flat memory.
 */
export function registerExport(program: Command): void {
  program
    .command('export')
    .description('export messages, one JSON object per line (the StoredMessage shape)')
    .addOption(new Option('--format <format>', 'output format').choices(['jsonl']).default('jsonl'))
    .option('-c, --conversation <id>', 'only this conversation')
    .option('-o, --out <file>', 'write to this file instead of stdout (never an existing one)')
    .option('-f, --force', 'with --out: overwrite the file if it exists')
    .option('--progress', 'show a progress bar on stderr (default: when stderr is a terminal)')
    .option('--no-progress', 'never show a progress bar')
    .addHelpText(
      'after',
      `
Examples:
  $ colloquy export --format jsonl --out all.jsonl
  $ colloquy export --conversation telegram:42 | jq -r .content`,
    )
    .action(async (options: ExportOptions, command: Command) => {
      const db = await openDb(dbPathOf(command));
      try {
        if (options.conversation !== undefined) {
          await assertConversationExists(db, options.conversation);
        }
        const total = await countMessages(db, options.conversation);
        // Before the rows are read, so a path that cannot be written fails with its own reason.
        const fd = options.out === undefined ? undefined : openOut(options.out, options.force);
        const showProgress = options.progress ?? process.stderr.isTTY === true;
        const bar = showProgress ? new ProgressBar(process.stderr, total) : undefined;
        const count = await writeMessages(
          await iterateMessages(db, options.conversation),
          options.out === undefined || fd === undefined ? undefined : { path: options.out, fd },
          bar,
        );
        bar?.finish();
        const where = options.out === undefined ? '' : ` to ${options.out}`;
        note(`exported ${formatCount(count)} ${count === 1 ? 'message' : 'messages'}${where}`);
      } finally {
        await db.close();
      }
    });
}

/**
 * Opens `--out` for writing: never an existing file unless `force`; a path that cannot be
 * written fails with the file system's reason.
 */
function openOut(path: string, force = false): number {
  try {
    return openSync(path, force ? 'w' : 'wx');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      throw new CliError(`${path} already exists; pass --force to overwrite it`, { cause: error });
    }
    throw new CliError(`cannot write ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/** Writes each message as a JSON line, waiting for the stream to drain when it is full. */
async function writeMessages(
  messages: Iterable<unknown> | AsyncIterable<unknown>,
  file: { path: string; fd: number } | undefined,
  bar: ProgressBar | undefined,
): Promise<number> {
  const path = file?.path;
  const out = file === undefined ? process.stdout : createWriteStream(file.path, { fd: file.fd });
  let count = 0;
  try {
    let chunk = '';
    let pending = 0;
    for await (const message of messages) {
      chunk += `${JSON.stringify(message)}\n`;
      count += 1;
      pending += 1;
      if (chunk.length >= CHUNK_CHARS) {
        await write(out, chunk);
        bar?.tick(pending);
        chunk = '';
        pending = 0;
      }
    }
    if (chunk !== '') await write(out, chunk);
    bar?.tick(pending);
    if (path !== undefined) {
      out.end();
      await once(out, 'finish');
    }
    return count;
  } catch (error) {
    if (path !== undefined) {
      out.destroy();
      await rm(path, { force: true });
    }
    throw error;
  }
}

async function write(out: NodeJS.WritableStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}
