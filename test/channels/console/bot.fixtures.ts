import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

function isFresh(): boolean {
  const sources = ['src', 'agents', 'db', 'channels/console', 'examples'].map((d) => join(root, d));
  const newest = Math.max(...sources.map(newestSource));
  return existsSync(consoleBot) && statSync(consoleBot).mtimeMs >= newest;
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
