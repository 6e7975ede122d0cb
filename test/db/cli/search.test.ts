import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BIN,
  type RunResult,
  alice,
  assertBinIsBuilt,
  bot,
  colloquy,
  tempDir,
  turn,
} from './cli-harness.js';

const dir = tempDir();
const db = dir.file('search.db');
const REFUNDS = 'telegram:77';
const OTHER = 'telegram:78';
const HOSTILE = 'refund\u001b]0;pwned\u0007 now, before the screen clears\u001b[2J';

beforeAll(async () => {
  assertBinIsBuilt();
  const store = new SqliteConversationStore({ path: db });
  try {
    await store.append(turn(1, alice, 'the refund, the refund, the refund policy', REFUNDS));
    await store.append(turn(2, bot, 'A refund takes three days.', REFUNDS));
    await store.append(turn(3, alice, 'please send the policy', REFUNDS));
    await store.append(turn(4, alice, 'no money talk here', OTHER));
    await store.append(turn(5, alice, HOSTILE, OTHER));
  } finally {
    await store.close();
  }
});
afterAll(() => dir.remove());

const at = (n: number) => new Date(Date.UTC(2026, 10, 17, 9, 0, 0) + n * 60_000).toISOString();

describe('colloquy search', () => {
  it('prints the turns holding the words, best first, one plain line each when piped', async () => {
    const { code, stdout, stderr } = await colloquy(['search', 'refund', '--db', db]);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout.split('\n')).toEqual([
      `${at(1)}  ${REFUNDS}  Alice: the refund, the refund, the refund policy`,
      `${at(2)}  ${REFUNDS}  Orders: A refund takes three days.`,
      `${at(5)}  ${OTHER}  Alice: refund\\e]0;pwned\\a now, before the screen clears\\e[2J`,
      '',
    ]);
  });

  it('prints at most --limit turns', async () => {
    const { stdout } = await colloquy(['search', 'refund', '--limit', '1', '--db', db]);
    expect(stdout).toBe(`${at(1)}  ${REFUNDS}  Alice: the refund, the refund, the refund policy\n`);
  });

  it('finds turns with every word across conversations, and with any word in one conversation', async () => {
    const everywhere = await colloquy(['search', 'send', 'policy', '--db', db]);
    expect(everywhere.stdout).toBe(`${at(3)}  ${REFUNDS}  Alice: please send the policy\n`);

    const inOne = await colloquy(['search', 'send policy', '--conversation', REFUNDS, '--db', db]);
    expect(inOne.code).toBe(0);
    expect(inOne.stdout.trimEnd().split('\n')).toEqual([
      `${at(3)}  ${REFUNDS}  Alice: please send the policy`,
      `${at(1)}  ${REFUNDS}  Alice: the refund, the refund, the refund policy`,
    ]);
  });

  it('searches quotes, *, AND and NEAR( as plain words, saying so on stderr', async () => {
    const { code, stdout, stderr } = await colloquy([
      'search',
      '"refund" AND policy* NEAR(x',
      '--conversation',
      REFUNDS,
      '--db',
      db,
    ]);
    expect(code).toBe(0);
    expect(stderr).toBe(
      'note: quotes, *, -, parentheses and AND/OR/NOT/NEAR are searched as plain text\n',
    );
    expect(stdout.split('\n')[0]).toBe(
      `${at(1)}  ${REFUNDS}  Alice: the refund, the refund, the refund policy`,
    );
  });

  it('says when nothing matches, on stderr', async () => {
    const { code, stdout, stderr } = await colloquy(['search', 'invoice', '--db', db]);
    expect(code).toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toBe('no turns found for "invoice"\n');
  });

  it('refuses a query without a word as a usage error', async () => {
    const { code, stderr } = await colloquy(['search', '* "" -', '--db', db]);
    expect(code).toBe(2);
    expect(stderr).toBe(
      `colloquy: nothing to search for in "* \\"\\" -": give at least one word of letters or digits\n`,
    );
    const missing = await colloquy(['search', '--db', db]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^colloquy: missing required argument 'words'\n$/);
  });

  it('fails with one line for an unknown conversation', async () => {
    const { code, stderr } = await colloquy(['search', 'refund', '-c', 'telegram:1', '--db', db]);
    expect(code).toBe(1);
    expect(stderr).toBe(
      'colloquy: no conversation telegram:1 (list them with: colloquy conversations)\n',
    );
  });
});

// `script` runs the command on a pseudo-terminal, as a person's shell does.
const hasScript = existsSync('/usr/bin/script');
const scriptSkipReason = 'util-linux `script` is missing (Debian: apt-get install -y bsdutils)';
if (!hasScript && process.env.CI === 'true') throw new Error(scriptSkipReason);

describe(
  'colloquy search on a terminal',
  { skip: !hasScript, meta: { skipReason: scriptSkipReason } },
  () => {
    async function onTerminal(
      args: string[],
      env: Record<string, string> = {},
    ): Promise<RunResult> {
      const command = [process.execPath, BIN, ...args].map(shellQuote).join(' ');
      const clean = { ...process.env, COLLOQUY_DB: '', COLLOQUY_DEBUG: '', NO_COLOR: '' };
      const run = promisify(execFile);
      const { stdout, stderr } = await run('/usr/bin/script', ['-qec', command, '/dev/null'], {
        env: { ...clean, ...env },
      });
      return { code: 0, stdout: stdout.replace(/\r\n/g, '\n'), stderr };
    }

    it('marks the words in bold and underline, and escapes what the chat text holds', async () => {
      const { stdout } = await onTerminal(['search', 'REFUND', '--db', db]);
      const mark = (word: string) => `\u001b[1;4m${word}\u001b[22;24m`;
      expect(stdout.split('\n')).toEqual([
        `${at(1)}  ${REFUNDS}  Alice: the ${mark('refund')}, the ${mark('refund')}, the ${mark('refund')} policy`,
        `${at(2)}  ${REFUNDS}  Orders: A ${mark('refund')} takes three days.`,
        `${at(5)}  ${OTHER}  Alice: ${mark('refund')}\\e]0;pwned\\a now, before the screen clears\\e[2J`,
        '',
      ]);
    });

    it('prints plain text with NO_COLOR set', async () => {
      const { stdout } = await onTerminal(['search', 'refund', '-n', '1', '--db', db], {
        NO_COLOR: '1',
      });
      expect(stdout).toBe(
        `${at(1)}  ${REFUNDS}  Alice: the refund, the refund, the refund policy\n`,
      );
    });
  },
);

function shellQuote(arg: string): string {
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}
