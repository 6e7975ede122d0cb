import type Database from 'better-sqlite3';
import type { Statements } from './statements.js';
import type { ThreadWriter, Writer } from './writer.js';
import {
  StoreWrites,
  type WriteArgs,
  type WriteName,
  type WriteResult,
  callWrite,
} from './writes.js';

/**
 * The SQLite store's writer for files. A write someone waits for (`run`) happens on the
 * caller's connection when it can happen at once: nothing is queued for the writer thread (so
 * it cannot overtake one of those calls), no transaction is open on that connection, and the
 * file's write lock is free (tried without waiting). Otherwise it goes to the writer thread,
 * so another process holding the lock never stalls the event loop. A write nobody waits for
 * (`queue`: capture) always goes to the thread, so a busy bot's event loop does not pay for
 * its commits.
 *
 * @example
 * ```ts
 * const writer = new FirstInlineWriter(thread, db, sql, 5000);
 * await writer.run('append', input); // on this thread, or the writer thread if the file is busy
 * ```
 */
export class FirstInlineWriter implements Writer {
  readonly #writes: StoreWrites;
  readonly #db: Database.Database;
  readonly #noWait: Database.Statement;
  readonly #wait: Database.Statement;

  constructor(
    private readonly thread: ThreadWriter,
    db: Database.Database,
    sql: Statements,
    busyTimeoutMs: number,
  ) {
    this.#db = db;
    this.#writes = new StoreWrites(db, sql);
    this.#noWait = db.prepare('PRAGMA busy_timeout = 0');
    this.#wait = db.prepare(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  }

  get mode(): 'inline' | 'thread' {
    return this.thread.mode;
  }

  run<K extends WriteName>(name: K, ...args: WriteArgs<K>): Promise<WriteResult<K>> {
    // Not inside a transaction someone opened on this connection: the write would join it.
    if (this.thread.idle && !this.#db.inTransaction) {
      this.#noWait.get();
      try {
        return Promise.resolve(callWrite(this.#writes, name, args) as WriteResult<K>);
      } catch (error) {
        if (!isBusy(error)) return Promise.reject(error as Error);
        // The lock is taken (BEGIN IMMEDIATE failed, nothing was written): the thread waits.
      } finally {
        this.#wait.get();
      }
    }
    return this.thread.run(name, ...args);
  }

  queue<K extends WriteName>(name: K, ...args: WriteArgs<K>): Promise<WriteResult<K>> {
    return this.thread.queue(name, ...args);
  }

  flush(): void {
    this.thread.flush();
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
