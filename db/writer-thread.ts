import { receiveMessageOnPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { configureConnection } from './pragmas.js';
import {
  type Reply,
  type Request,
  type WriterThreadData,
  serializeError,
} from './writer-protocol.js';
import { StoreWrites, callWrite } from './writes.js';

/**
 * The SQLite store's writer thread (see `ThreadWriter` in `db/writer.ts`): opens its own
 * connection to the file the store has already migrated, then answers write calls in order.
 * What has queued up while it was busy is committed in one transaction, each call in a
 * savepoint of its own: one call failing leaves the others written.
 */

/** Most calls committed together. */
const MAX_BATCH = 256;

type Call = Extract<Request, { id: number }>;
type Group = (calls: Call[], replies: Reply[]) => void;

function start({ path, busyTimeoutMs, port }: WriterThreadData): void {
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
  const group = writes.db.transaction((calls: Call[], replies: Reply[]) => {
    for (const c of calls) replies.push(answer(writes, c));
  });

  port.on('message', (first: Request) => {
    const batch = [first];
    while (batch.length < MAX_BATCH) {
      const next = receiveMessageOnPort(port);
      if (next === undefined) break;
      batch.push(next.message as Request);
    }
    const closeAt = batch.findIndex((request) => 'close' in request);
    const calls = (closeAt === -1 ? batch : batch.slice(0, closeAt)) as Call[];
    for (const reply of commit(writes, group, calls)) port.postMessage(reply);
    if (closeAt !== -1) {
      writes.db.close();
      port.close();
    }
  });
  port.postMessage({ ready: true } satisfies Reply);
}

function commit(writes: StoreWrites, group: Database.Transaction<Group>, calls: Call[]): Reply[] {
  if (calls.length <= 1) return calls.map((c) => answer(writes, c));
  const replies: Reply[] = [];
  try {
    group.immediate(calls, replies);
    return replies;
  } catch (error) {
    // BEGIN or COMMIT failed, so none of the batch is stored. The first call that failed
    // inside (a full disk aborts the whole transaction) says best why.
    const inside = replies.find((reply) => 'error' in reply);
    const reason = inside !== undefined && 'error' in inside ? inside.error : serializeError(error);
    return calls.map(({ id }) => ({ id, error: reason }));
  }
}

function answer(writes: StoreWrites, { id, name, args }: Call): Reply {
  try {
    return { id, value: callWrite(writes, name, args) };
  } catch (error) {
    return { id, error: serializeError(error) };
  }
}

start(workerData as WriterThreadData);
