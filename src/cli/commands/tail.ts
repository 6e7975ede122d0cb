import type Database from 'better-sqlite3';
import type { Command } from 'commander';
import { openSql } from '../database.js';
import { dbPathOf, note, print } from '../context.js';
import { positiveInteger } from '../parse.js';
import type { TranscriptLine } from '../transcript.js';
import { assertConversationExists, formatTurn, newestTurns, turnsAfter } from '../transcript.js';

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
    .option('--interval <ms>', 'how often --follow polls, in milliseconds', positiveInteger, 500)
    .addHelpText(
      'after',
      `
Examples:
  $ colloquy tail -n 50
  $ colloquy tail --conversation slack:T024BE7LD:C024BE91L --follow`,
    )
    .action(async (options: TailOptions, command: Command) => {
      const db = await openSql(dbPathOf(command));
      try {
        if (options.conversation !== undefined) assertConversationExists(db, options.conversation);
        const turns = newestTurns(db, options.conversation, options.lines);
        for (const turn of turns) print(formatTurn(turn));
        if (!options.follow) {
          if (turns.length === 0) print('no messages yet');
          return;
        }
        if (turns.length === 0 && process.stderr.isTTY) {
          note('no messages yet; waiting for new ones');
        }
        await follow(db, options, turns.at(-1)?.seq ?? 0);
      } finally {
        db.close();
      }
    });
}

/** Polls for turns after `lastSeq` until SIGINT or SIGTERM. */
function follow(db: Database.Database, options: TailOptions, lastSeq: number): Promise<void> {
  let seen = lastSeq;
  return new Promise<void>((resolve, reject) => {
    const finish = (error?: unknown) => {
      clearInterval(timer);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onSignal = () => finish();
    const poll = () => {
      try {
        let batch: TranscriptLine[];
        do {
          batch = turnsAfter(db, options.conversation, seen, PAGE);
          for (const turn of batch) print(formatTurn(turn));
          seen = batch.at(-1)?.seq ?? seen;
        } while (batch.length === PAGE);
      } catch (error) {
        finish(error);
      }
    };
    const timer = setInterval(poll, options.interval);
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
