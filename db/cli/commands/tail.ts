import type { Command } from 'commander';
import { type CliDb, openDb } from '../database.js';
import { dbPathOf, note, print } from '../context.js';
import { positiveInteger } from '../parse.js';
import type { TranscriptLine } from '../transcript.js';
import {
  type CommitCursor,
  assertConversationExists,
  commitCursorNow,
  formatTurn,
  newestTurns,
  turnsAfter,
  turnsCommittedAfter,
} from '../transcript.js';

/** Most turns one poll reads at a time. */
const PAGE = 1000;

interface TailOptions {
  conversation?: string;
  lines: number;
  follow?: boolean;
  interval: number;
}

/** `colloquy tail`: the newest turns, and with `--follow` every new one as it is stored. */
export function registerTail(program: Command): void {
  program
    .command('tail')
    .description('print the newest turns as "time  conversation  speaker (kind): text"')
    .option('-c, --conversation <id>', 'only this conversation')
    .option('-n, --lines <count>', 'how many turns', positiveInteger, 20)
    .option('-f, --follow', 'keep printing new turns as they are stored, until Ctrl-C')
    .option(
      '--interval <ms>',
      'how often --follow polls, in milliseconds (Postgres also pushes each commit)',
      positiveInteger,
      500,
    )
    .addHelpText(
      'after',
      `
Examples:
  $ colloquy tail -n 50
  $ colloquy tail --conversation slack:T024BE7LD:C024BE91L --follow`,
    )
    .action(async (options: TailOptions, command: Command) => {
      const db = await openDb(dbPathOf(command));
      try {
        if (options.conversation !== undefined) {
          await assertConversationExists(db, options.conversation);
        }
        // Postgres: where a follower starts, taken before the newest turns are read.
        const cursor = db.dialect === 'postgres' ? await commitCursorNow(db) : undefined;
        const turns = await newestTurns(db, options.conversation, options.lines);
        for (const turn of turns) print(formatTurn(turn));
        if (!options.follow) {
          if (turns.length === 0) print('no messages yet');
          return;
        }
        if (turns.length === 0 && process.stderr.isTTY) {
          note('no messages yet; waiting for new ones');
        }
        const printed = new Set(turns.map((turn) => turn.seq));
        const next =
          cursor === undefined
            ? seqReader(db, options, turns.at(-1)?.seq ?? 0)
            : commitReader(db, options, cursor, printed);
        await follow(options, next, db.postgres);
      } finally {
        await db.close();
      }
    });
}

/** Reads the turns stored since the last call, printing them. */
type Reader = () => Promise<void>;

/** SQLite: turns after the last sequence printed (one writer at a time: no late commits). */
function seqReader(db: CliDb, options: TailOptions, lastSeq: number): Reader {
  let seen = lastSeq;
  return async () => {
    let batch: TranscriptLine[];
    do {
      batch = await turnsAfter(db, options.conversation, seen, PAGE);
      for (const turn of batch) print(formatTurn(turn));
      seen = batch.at(-1)?.seq ?? seen;
    } while (batch.length === PAGE);
  };
}

/** Postgres: turns committed after the cursor (see `turnsCommittedAfter`). */
function commitReader(
  db: CliDb,
  options: TailOptions,
  start: CommitCursor,
  printed: Set<number>,
): Reader {
  let cursor = start;
  return async () => {
    let batch: (TranscriptLine & CommitCursor)[];
    do {
      batch = await turnsCommittedAfter(db, options.conversation, cursor, PAGE);
      for (const turn of batch) {
        // Read before the follow began (committed between the cursor and the first read).
        if (!printed.delete(turn.seq)) print(formatTurn(turn));
      }
      const last = batch.at(-1);
      if (last !== undefined) cursor = { txid: last.txid, seq: last.seq };
    } while (batch.length === PAGE);
  };
}

/**
 * Reads new turns until SIGINT or SIGTERM: every `interval` ms, and on Postgres also as soon as
 * a transaction that stored turns commits (LISTEN colloquy_turns).
 */
async function follow(
  options: TailOptions,
  read: Reader,
  postgres: CliDb['postgres'],
): Promise<void> {
  const listener = postgres === undefined ? undefined : await postgres.pool.connect();
  let reading = Promise.resolve();
  let failed: unknown;
  const wake = () => {
    reading = reading.then(read).catch((error: unknown) => {
      failed ??= error;
      stop();
    });
  };
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const timer = setInterval(wake, options.interval);
  const onSignal = () => stop();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    if (listener !== undefined) {
      listener.on('notification', wake);
      listener.on('error', (error) => {
        failed ??= error;
        stop();
      });
      await listener.query('LISTEN colloquy_turns');
    }
    await stopped;
    await reading;
  } finally {
    clearInterval(timer);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    listener?.release(true);
  }
  if (failed !== undefined) throw failed;
}
