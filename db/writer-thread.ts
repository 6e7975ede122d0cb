import { statSync } from 'node:fs';
import { type MessagePort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { configureConnection } from './pragmas.js';
import { commitBatch } from './batch.js';
import {
  type Call,
  Doorbell,
  POLL_MS,
  type Reply,
  type Request,
  SLEEP_AFTER_MS,
  type WriterThreadData,
  serializeError,
} from './writer-protocol.js';
import { StoreWrites } from './writes.js';

/**
 * The SQLite store's writer thread (see `ThreadWriter` in `db/writer.ts`): opens its own
 * connection to the file the store has already migrated, then answers write calls in order.
 * It waits on the store's doorbell, not in its event loop (see `Doorbell`); what has arrived
 * since its last look is committed together (`commitBatch`).
 */

/** Most calls committed together. */
const MAX_BATCH = 256;

/** How often the thread looks at the WAL's size, at most. */
const WAL_CHECK_MS = 1000;

function start({ path, busyTimeoutMs, walLimitBytes, port, bell }: WriterThreadData): void {
  let writes: StoreWrites;
  try {
    const db = new Database(path, { fileMustExist: true, timeout: busyTimeoutMs });
    configureConnection(db, { busyTimeoutMs, readonly: false });
    writes = new StoreWrites(db);
  } catch (error) {
    port.postMessage({ failed: serializeError(error) } satisfies Reply);
    port.close();
    return;
  }
  let checkedAt = Date.now();
  const keepWalShort = () => {
    if (Date.now() - checkedAt < WAL_CHECK_MS) return;
    checkedAt = Date.now();
    try {
      if (statSync(`${path}-wal`).size > walLimitBytes) {
        writes.db.pragma('wal_checkpoint(TRUNCATE)');
      }
    } catch {
      // busy (a reader on an old snapshot, another process): next time
    }
  };

  port.postMessage({ ready: true } satisfies Reply);
  const rings = new Int32Array(bell);
  let seen = Atomics.load(rings, Doorbell.rings);
  let lookedAt = -Infinity;
  let quietSince = Date.now();
  for (;;) {
    // One look per POLL_MS at most, unless rung since the last: a busy bot's turns are
    // committed together, in fewer and larger transactions (less work per turn).
    const wait = lookedAt + POLL_MS - Date.now();
    if (wait > 0) Atomics.wait(rings, Doorbell.rings, seen, wait);
    seen = Atomics.load(rings, Doorbell.rings);
    lookedAt = Date.now();
    let batch = take(port);
    if (batch.length === 0 && lookedAt - quietSince >= SLEEP_AFTER_MS) {
      batch = sleepUntilRung(port, rings, seen);
      lookedAt = -Infinity;
    }
    if (batch.length === 0) continue;
    quietSince = Date.now();
    const closeAt = batch.findIndex((request) => 'close' in request);
    const calls = (closeAt === -1 ? batch : batch.slice(0, closeAt)) as Call[];
    if (calls.length > 0) port.postMessage(commitBatch(writes, calls) satisfies Reply);
    if (closeAt !== -1) {
      writes.db.close();
      port.close();
      return;
    }
    keepWalShort();
    // A full batch leaves calls waiting: the next look is now.
    if (batch.length >= MAX_BATCH) lookedAt = -Infinity;
  }
}

/**
 * Sleeps until the store rings, unless a call arrives meanwhile (returned). Asleep from the
 * flag on, then one more look: a call posted before the store could see the flag is found
 * now, and one posted after it rings.
 */
function sleepUntilRung(port: MessagePort, rings: Int32Array, seen: number): Request {
  Atomics.store(rings, Doorbell.asleep, 1);
  const late = take(port);
  if (late.length === 0) Atomics.wait(rings, Doorbell.rings, seen);
  Atomics.store(rings, Doorbell.asleep, 0);
  return late;
}

/** What has arrived on the port, in order, up to `MAX_BATCH` calls. */
function take(port: MessagePort): Request {
  const batch: Request = [];
  while (batch.length < MAX_BATCH) {
    const next = receiveMessageOnPort(port);
    if (next === undefined) break;
    batch.push(...(next.message as Request));
  }
  return batch;
}

start(workerData as WriterThreadData);
