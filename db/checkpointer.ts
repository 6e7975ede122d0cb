import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import { WAL_LIMIT, startWorker } from './thread-options.js';

/**
 * Runs SQLite's WAL checkpoints on a worker thread with its own connection, so the copy back
 * into the database file and its fsync never stall the bot's event loop. SQLite's automatic
 * checkpoint runs inside whichever commit crosses the threshold: on the thread capturing a
 * turn. With a checkpointer the store turns that off for its own connection.
 *
 * The worker is plain JavaScript evaluated from a string (so it runs the same from the
 * sources and from the build) and loads the same better-sqlite3 the store uses.
 *
 * @example
 * ```ts
 * const checkpointer = await Checkpointer.start('./colloquy.db');
 * await checkpointer.checkpoint(); // now, and every second anyway
 * await checkpointer.close();
 * ```
 */
export class Checkpointer {
  private next = 0;
  private readonly pending = new Map<number, () => void>();

  private constructor(private readonly worker: Worker) {
    worker.on('message', (message: { done: number }) => {
      this.pending.get(message.done)?.();
      this.pending.delete(message.done);
      if (this.pending.size === 0) worker.unref();
    });
    // The thread never keeps a process alive by itself, only while a caller awaits it.
    worker.unref();
  }

  /** Starts the worker; resolves once its connection is open, rejects if it cannot open. */
  static start(path: string, intervalMs = 1000, walLimitBytes = WAL_LIMIT): Promise<Checkpointer> {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = startWorker(WORKER_SOURCE, {
      eval: true,
      workerData: { path, driver, intervalMs, walLimitBytes },
    });
    return new Promise((resolve, reject) => {
      worker.once('error', reject);
      worker.once('message', () => {
        worker.off('error', reject);
        worker.on('error', () => undefined); // a failed checkpoint is retried next interval
        resolve(new Checkpointer(worker));
      });
    });
  }

  /** Checkpoints now (PASSIVE: never waits for readers or writers). */
  checkpoint(): Promise<void> {
    const id = ++this.next;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.worker.ref();
      this.worker.postMessage({ checkpoint: id });
    });
  }

  /** A last checkpoint, then the worker closes its connection and the thread ends. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.worker.once('exit', () => resolve());
      this.worker.ref();
      this.worker.postMessage({ close: true });
    });
    return this.closing;
  }

  private closing: Promise<void> | undefined;
}

const WORKER_SOURCE = `
const { statSync } = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 1000');
const walSize = () => { try { return statSync(workerData.path + '-wal').size; } catch { return 0; } };
const run = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    if (walSize() > workerData.walLimitBytes) db.pragma('wal_checkpoint(TRUNCATE)');
  } catch {}
};
const timer = setInterval(run, workerData.intervalMs);
timer.unref();
parentPort.on('message', (message) => {
  run();
  if (message.close) { db.close(); process.exit(0); }
  parentPort.postMessage({ done: message.checkpoint });
});
parentPort.postMessage({ ready: true });
`;
