import { parentPort, workerData } from 'node:worker_threads';
import { SqliteConversationStore } from './store.js';
import type { WriterRequest, WriterThreadData } from './commit-thread.js';
import { toWire } from './commit-thread.js';

/**
 * The SQLite store's writer thread (see `Writer` in `db/sqlite/commit-thread.ts`): its own connection to the
 * file the store has opened and migrated, committing each batch it is handed, in order.
 */
const { path, busyTimeoutMs, durability } = workerData as WriterThreadData;
const store = new SqliteConversationStore({ path, busyTimeoutMs, durability });
const port = parentPort!;
port.on('message', (request: WriterRequest) => {
  if (request.close) {
    void store.close().then(() => port.close());
    return;
  }
  // `commit` answers synchronously under its promise: batches never interleave.
  void store.commit(request.ops).then((results) => {
    port.postMessage({ id: request.id, results: results.map(toWire) });
  });
});
port.postMessage({ ready: true });
