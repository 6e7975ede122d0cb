import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { openDb, openStore } from '../database.js';
import { dbPathOf, print } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { formatCount } from '../format.js';

interface ForgetOptions {
  redact?: boolean;
  yes?: boolean;
}

/**
 * `colloquy forget <participantId>`: a data-protection request. Deletes (or with `--redact`
 * blanks) everything a participant wrote, everywhere, through the store's
 * `forgetParticipant`. Asks first on a terminal; elsewhere it needs `--yes`.
 */
export function registerForget(program: Command): void {
  program
    .command('forget')
    .description('delete (or --redact) everything a participant wrote, in every conversation')
    .argument(
      '<participantId>',
      'the participant id (speaker_id in the transcript), e.g. slack:U024BE7LH or telegram:1001',
    )
    .option('--redact', 'keep the turns but blank their text and the participant name')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .addHelpText(
      'after',
      `
Examples:
  $ colloquy forget telegram:1001
  $ colloquy forget slack:U024BE7LH --redact --yes`,
    )
    .action(async (participantId: string, options: ForgetOptions, command: Command) => {
      const path = dbPathOf(command);
      const found = await countWritten(path, participantId);
      if (found.participant === 0 && found.messages === 0) {
        const named = await participantsNamed(path, participantId);
        if (named.length > 0) throw new CliError(suggestIds(participantId, named));
        print(`nothing to forget: no participant ${participantId}`);
        return;
      }
      const verb = options.redact ? 'redact' : 'delete';
      if (!options.yes) {
        if (!process.stdin.isTTY) {
          throw new UsageError('refusing to forget without --yes when stdin is not a terminal');
        }
        const question =
          `${verb} ${messages(found.messages)} by ${participantId} in ` +
          `${formatCount(found.conversations)} conversation(s)? This cannot be undone. [y/N] `;
        if (!(await confirm(question))) {
          print('nothing changed');
          return;
        }
      }
      const store = await openStore(path, { write: true });
      try {
        const n = await store.forgetParticipant(participantId, {
          mode: options.redact ? 'redact' : 'delete',
        });
        const done = options.redact ? 'redacted' : 'deleted';
        print(`${done} ${messages(n)} by ${participantId}`);
      } finally {
        await store.close();
      }
    });
}

async function countWritten(path: string, participantId: string) {
  const db = await openDb(path);
  try {
    const [found] = await db.all<{ participant: number; messages: number; conversations: number }>(
      `select (select count(*) from participants where id = @id) as participant,
         count(*) as messages, count(distinct conversation_id) as conversations
       from messages where participant_id = @id`,
      { id: participantId },
    );
    return found ?? { participant: 0, messages: 0, conversations: 0 };
  } finally {
    await db.close();
  }
}

/** The participants whose display name (what the transcript shows) is `name`, any case. */
async function participantsNamed(
  path: string,
  name: string,
): Promise<{ id: string; name: string }[]> {
  const db = await openDb(path);
  try {
    return await db.all<{ id: string; name: string }>(
      `select id, display_name as name from participants
       where lower(display_name) = lower(@name) order by id`,
      { name },
    );
  } finally {
    await db.close();
  }
}

/** Names the id (or ids) to use instead of a display name. */
function suggestIds(given: string, named: { id: string; name: string }[]): string {
  const shown = named[0]?.name ?? given;
  const ids = named.map((p) => p.id);
  const which =
    ids.length === 1
      ? `${ids[0]}: run colloquy forget ${ids[0]}`
      : `${ids.slice(0, -1).join(', ')} and ${ids.at(-1)}: run colloquy forget with one of those ids`;
  return `no participant id ${given}; "${shown}" is the name of ${which}`;
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(question);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

function messages(n: number): string {
  return `${formatCount(n)} ${n === 1 ? 'message' : 'messages'}`;
}
