import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteConversationStore } from 'colloquy/sqlite';
import type { NewMessage, Participant } from '../../../src/types.js';
import type { ConversationStore } from '../../../src/store.js';

/**
 * Helpers for the CLI suites: they run the real built bin (`node dist/db/cli/bin.js`) as a
 * child process against real SQLite files written through `SqliteConversationStore`.
 */

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** The built CLI entry (`bin.colloquy` in package.json). */
export const BIN = join(ROOT, 'dist/db/cli/bin.js');

/** Fails with an instruction when the bin is missing or older than its sources. */
export function assertBinIsBuilt(): void {
  const hint = 'run `npm run build` first (`npm test` does)';
  if (!existsSync(BIN)) throw new Error(`${relative(ROOT, BIN)} is missing: ${hint}`);
  // The build's record is rewritten by every build; an emitted file whose output did not
  // change keeps its time.
  const buildInfo = join(ROOT, 'dist/tsconfig.tsbuildinfo');
  const builtAt = statSync(buildInfo, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const source = join(ROOT, 'db/cli');
  for (const file of walk(source)) {
    const built = join(ROOT, 'dist/db/cli', relative(source, file)).replace(/\.ts$/, '.js');
    if (!existsSync(built)) throw new Error(`${relative(ROOT, built)} is missing: ${hint}`);
    if (builtAt < statSync(file).mtimeMs) {
      throw new Error(`${relative(ROOT, file)} changed since the last build: ${hint}`);
    }
  }
}

function* walk(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

/** A temp directory per suite, removed afterwards. */
export function tempDir(): { path: string; file: (name: string) => string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'colloquy-cli-'));
  return {
    path,
    file: (name) => join(path, name),
    remove: () => rmSync(path, { recursive: true, force: true }),
  };
}

/** What one run of the CLI did. */
export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Extra environment (COLLOQUY_DB and COLLOQUY_DEBUG are cleared unless set here). */
  env?: Record<string, string>;
  cwd?: string;
  /** Text for stdin (stdin is an empty pipe otherwise, so never a TTY). */
  input?: string;
}

/** Starts `colloquy …args` and leaves it running (for `tail --follow`). */
export function start(args: string[], options: RunOptions = {}): ChildProcessWithoutNullStreams {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.COLLOQUY_DB;
  delete env.COLLOQUY_DEBUG;
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...env, ...options.env },
  });
  child.stdin.end(options.input ?? '');
  return child;
}

/** Runs `colloquy …args` to completion. */
export function colloquy(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const child = start(args, options);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Resolves with everything the stream wrote once `text` has appeared in it. */
export function waitForOutput(stream: NodeJS.ReadableStream, text: string): Promise<string> {
  let seen = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer | string) => {
      seen += String(chunk);
      if (seen.includes(text)) {
        stream.off('data', onData);
        resolve(seen);
      }
    };
    stream.on('data', onData);
    stream.once('end', () =>
      reject(new Error(`output ended before ${JSON.stringify(text)}:\n${seen}`)),
    );
  });
}

export const alice: Participant = { kind: 'user', id: 'telegram:1001', displayName: 'Alice' };
export const bob: Participant = { kind: 'user', id: 'slack:U0B0B', displayName: 'Bob' };
export const bot: Participant = { kind: 'agent', id: 'orders-bot', displayName: 'Orders' };

/** The conversations `populate` writes. */
export const DM = 'telegram:42';
export const CHANNEL = 'slack:T024BE7LD:C024BE91L';

/** A turn in one of the two test conversations; `n` orders the timestamps. */
export function turn(
  n: number,
  participant: Participant,
  content: string,
  conversationId = DM,
): NewMessage {
  const slack = conversationId === CHANNEL;
  return {
    id: `${conversationId}:${n}`,
    conversationId,
    participant,
    content,
    timestamp: new Date(Date.UTC(2026, 10, 17, 9, 0, 0) + n * 60_000).toISOString(),
    scope: slack ? 'channel' : 'dm',
    metadata: {
      channelType: slack ? 'slack' : 'telegram',
      channelId: slack ? 'C024BE91L' : '42',
      ...(slack ? { channelName: 'orders' } : {}),
      messageId: String(n),
      mentions: participant.kind === 'user' && slack ? [bot.id] : [],
    },
  };
}

/**
 * Writes a small known history through the store: a Telegram DM (Alice and the bot, one
 * edited and one deleted turn) and a Slack channel (Bob, Alice and the bot), newer.
 */
export async function populate(path: string): Promise<void> {
  const store = new SqliteConversationStore({ path });
  try {
    await populateStore(store);
  } finally {
    await store.close();
  }
}

/** `populate`'s history, written to any store (a Postgres one, say). */
export async function populateStore(store: ConversationStore): Promise<void> {
  await store.append(turn(1, alice, 'where is my order 1234?'));
  await store.append(turn(2, bot, 'It ships tomorrow.'));
  await store.append(turn(3, alice, 'thanks!\nsee you'));
  await store.append(turn(4, alice, 'oops, wrong chat'));
  await store.recordEdit({
    channelType: 'telegram',
    channelId: '42',
    messageId: '1',
    content: 'where is my order 1235?',
    editedAt: new Date(Date.UTC(2026, 10, 17, 9, 30)).toISOString(),
  });
  await store.recordDeletion({
    channelType: 'telegram',
    channelId: '42',
    messageId: '4',
    deletedAt: new Date(Date.UTC(2026, 10, 17, 9, 31)).toISOString(),
  });
  await store.append(turn(10, bob, '@orders status of the Acme account?', CHANNEL));
  await store.append(turn(11, bot, 'Acme renewed on Monday.', CHANNEL));
  await store.append(turn(12, alice, 'nice', CHANNEL));
}

/** Creates an empty database the way a bot does on its first start. */
export async function createEmpty(path: string): Promise<void> {
  await new SqliteConversationStore({ path }).close();
}
