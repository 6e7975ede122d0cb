import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeOpenAIServer, type FakeOpenAIServerOptions } from 'colloquy/testing';

export const root = fileURLToPath(new URL('../../..', import.meta.url));
export const consoleBot = join(root, 'dist/examples/console-bot.js');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * The build's record (`tsc -b` rewrites it on every build that looked at a changed source;
 * an emitted file keeps its time when its output did not change).
 */
const buildInfo = join(root, 'dist/tsconfig.tsbuildinfo');

function isFresh(): boolean {
  const sources = ['src', 'agents', 'db', 'channels/console', 'examples'].map((d) => join(root, d));
  const newest = Math.max(...sources.map(newestSource));
  const built = statSync(buildInfo, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  return existsSync(consoleBot) && built >= newest;
}

/**
 * Builds the package (as `npm start` does) unless dist/ is newer than every source. Test
 * files run in parallel, so one builds while the others wait on a lock directory.
 */
export function buildIfStale(): void {
  const lock = join(root, '.vitest-tmp', 'build.lock');
  mkdirSync(dirname(lock), { recursive: true });
  for (;;) {
    if (isFresh()) return;
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock left by a killed run is stale after three minutes.
      const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
      if (Date.now() - since > 180_000) {
        rmSync(lock, { recursive: true, force: true });
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200); // another file builds
    }
  }
  try {
    if (isFresh()) return;
    // Exit status ignored: another folder's type error must not hide this one's behaviour.
    spawnSync(
      process.execPath,
      [join(root, 'node_modules/typescript/bin/tsc'), '-b', 'tsconfig.json'],
      { cwd: root, stdio: 'ignore' },
    );
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
  if (!existsSync(consoleBot)) {
    throw new Error('the build did not produce dist/examples/console-bot.js');
  }
}

/** The console bot as a child process with piped stdio, and helpers to talk to it. */
export function startConsoleBot(env: Record<string, string>) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [consoleBot], {
    cwd: root,
    env: { ...process.env, COLLOQUY_MODEL: '', COLLOQUY_LOG_LEVEL: 'warn', ...env },
    stdio: 'pipe',
  });
  let stdout = '';
  let stderr = '';
  const waiters: { lines: number; resolve: (lines: string[]) => void }[] = [];
  const lines = () => stdout.split('\n').filter((line) => line !== '');
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    for (const waiter of [...waiters]) {
      if (stdout.endsWith('\n') && lines().length >= waiter.lines) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(lines());
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    stderr: () => stderr,
    stdout: () => stdout,
    /** Writes a line and resolves with stdout's lines once `replies` lines have been printed. */
    say(text: string, replies: number): Promise<string[]> {
      const answered = new Promise<string[]>((resolve) =>
        waiters.push({ lines: replies, resolve }),
      );
      child.stdin.write(`${text}\n`);
      return answered;
    },
  };
}

/** Resolves once `condition` holds (the child process gives no event to await). */
export async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (condition()) return;
    } catch {
      // the database file is not there yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${condition.toString()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** util-linux `script`, which runs a command on a pseudo-terminal (Linux; not macOS's). */
export const hasScript =
  spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux') ?? false;

/** Why the terminal tests cannot run here; under CI=true a missing `script` fails the file. */
export const scriptSkipReason =
  'util-linux `script` is missing (Debian: apt-get install -y bsdutils)';
if (!hasScript && process.env.CI === 'true') throw new Error(scriptSkipReason);

/** Options for a test that needs a pseudo-terminal: skipped with its reason without `script`. */
export const onTerminal = { skip: !hasScript, meta: { skipReason: scriptSkipReason } };

/** The console bot on a pseudo-terminal (util-linux `script`): keys in, the screen out. */
export function startOnTerminal(env: Record<string, string>) {
  const child = spawn('script', ['-qefc', `"${process.execPath}" "${consoleBot}"`, '/dev/null'], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: 'pipe',
  });
  let screen = '';
  child.stdout.on('data', (chunk: Buffer) => (screen += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { child, exited, screen: () => screen };
}

/**
 * The rows a terminal shows after `output`: carriage returns, line feeds and the cursor and
 * erase sequences readline writes are applied; colours are dropped.
 */
export function render(output: string): string[] {
  const rows = [''];
  let row = 0;
  let col = 0;
  for (let i = 0; i < output.length; i++) {
    const char = output[i]!;
    if (char === '\x1b') {
      // eslint-disable-next-line no-control-regex
      const sequence = /^\x1b\[([0-9;]*)([A-Za-z])/.exec(output.slice(i));
      if (sequence === null) continue;
      i += sequence[0].length - 1;
      const n = Number(sequence[1] || '1');
      const line = rows[row]!;
      if (sequence[2] === 'G') col = n - 1;
      else if (sequence[2] === 'K') rows[row] = line.slice(0, col);
      else if (sequence[2] === 'J') {
        rows[row] = line.slice(0, col);
        rows.length = row + 1;
      } else if (sequence[2] === 'A') row = Math.max(0, row - n);
      else if (sequence[2] === 'C') col += n;
      else if (sequence[2] === 'D') col = Math.max(0, col - n);
      continue;
    }
    if (char === '\r') col = 0;
    else if (char === '\n') {
      row += 1;
      col = 0;
      rows[row] ??= '';
    } else {
      const line = rows[row]!.padEnd(col);
      rows[row] = line.slice(0, col) + char + line.slice(col + 1);
      col += 1;
    }
  }
  return rows.map((line) => line.trimEnd());
}

/**
 * A fake model server that holds its first answer, and the console bot's environment for it:
 * a new database `chat.db` in `dir`, the model at the server, and `env` on top.
 *
 * @example
 * ```ts
 * const { model, held, env } = await heldModel(temp.make('console'), { COLLOQUY_USER_NAME: 'Ada' });
 * const bot = startConsoleBot(env);
 * ```
 */
export async function heldModel(
  dir: string,
  env: Record<string, string> = {},
  options: FakeOpenAIServerOptions = {},
) {
  const model = await new FakeOpenAIServer(options).start();
  const held = model.holdNext();
  const db = join(dir, 'chat.db');
  return {
    model,
    held,
    db,
    env: {
      COLLOQUY_DB: db,
      COLLOQUY_MODEL: 'openai-compatible:fake-model',
      COLLOQUY_MODEL_BASE_URL: model.baseURL,
      ...env,
    },
  };
}
