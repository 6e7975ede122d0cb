import { existsSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { StoreOperation } from '../../../src/store.js';
import { resolveDbPath } from '../../default-store.js';
import { openStore } from '../database.js';
import { redactText } from '../../../src/logger.js';
import type { GlobalOptions } from '../context.js';
import { print } from '../context.js';
import { CliError, UsageError } from '../errors.js';

const SUFFIX = '.dead-letter.jsonl';
const KINDS = new Set(['append', 'edit', 'delete', 'reaction', 'reply', 'confirm', 'run', 'state']);
/** Records of agent work (runs, reply confirmations, channel state): applied, counted apart. */
const WORK = new Set(['confirm', 'run', 'state']);

/**
 * `colloquy import <file>`: writes back the operations a bot left in its dead-letter file
 * (one JSON object a line, `{ op, reason, error, at }`). Idempotent: a turn already stored is
 * not stored again, an edit or deletion already recorded changes nothing. Without `--db` (or
 * `COLLOQUY_DB`), `<db>.dead-letter.jsonl` goes back into `<db>`.
 */
export function registerImport(program: Command): void {
  program
    .command('import')
    .description('write back the turns a bot left in its dead-letter file (<db>.dead-letter.jsonl)')
    .argument('<file>', 'the dead-letter file, one JSON object per line')
    .addHelpText(
      'after',
      `
Examples:
  $ colloquy import colloquy.db.dead-letter.jsonl
  $ colloquy import --db /var/lib/bot.db saved-letters.jsonl`,
    )
    .action(async (file: string, _options: unknown, command: Command) => {
      if (!existsSync(file)) throw new UsageError(`no file ${file}`);
      const ops = readOps(file);
      const given = command.optsWithGlobals<GlobalOptions>().db ?? process.env.COLLOQUY_DB;
      const path =
        given === undefined && file.endsWith(SUFFIX)
          ? file.slice(0, -SUFFIX.length)
          : resolveDbPath(given);
      const store = await openStore(path, { write: true });
      let stored = 0;
      let already = 0;
      let work = 0;
      const failed: string[] = [];
      try {
        const results = await store.commit(ops.map((entry) => entry.op));
        results.forEach((result, i) => {
          const { kind } = ops[i]!.op;
          if (!result.ok) failed.push(`line ${ops[i]!.line}: ${result.error.message}`);
          else if (WORK.has(kind)) work++;
          else if (
            (kind === 'append' || kind === 'reply') &&
            !(result.value as { inserted: boolean }).inserted
          ) {
            already++;
          } else stored++;
        });
      } finally {
        await store.close();
      }
      print(
        `${redactText(path)}: ${stored} written, ${already} already stored` +
          (work > 0 ? `, ${work} records of agent work applied` : '') +
          (failed.length > 0 ? `, ${failed.length} failed` : ''),
      );
      if (failed.length > 0) throw new CliError(failed.join('; '));
    });
}

function readOps(file: string): { op: StoreOperation; line: number }[] {
  const ops: { op: StoreOperation; line: number }[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      if (text.trim() === '') return;
      let op: unknown;
      try {
        op = (JSON.parse(text) as { op?: unknown }).op;
      } catch {
        throw new CliError(`${file} line ${i + 1} is not JSON`);
      }
      const kind = (op as { kind?: unknown } | undefined)?.kind;
      if (typeof kind !== 'string' || !KINDS.has(kind)) {
        throw new CliError(`${file} line ${i + 1} holds no operation colloquy can write`);
      }
      ops.push({ op: op as StoreOperation, line: i + 1 });
    });
  return ops;
}
