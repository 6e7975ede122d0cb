import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { afterAll } from 'vitest';
import { describeLeaseContract } from '../../contracts/lease-contract.js';
import { describeSharedStoreContract } from '../../contracts/shared-store-contract.js';

// Two connections on one SQLite file, as two bot processes on one machine share it.
const dir = mkdtempSync(join(tmpdir(), 'colloquy-shared-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

describeLeaseContract('SqliteConversationStore (file)', () =>
  SqliteConversationStore.open(join(dir, `leases-${++files}.db`)),
);

describeSharedStoreContract('SqliteConversationStore, two connections on one file', () => {
  const path = join(dir, `shared-${++files}.db`);
  return [SqliteConversationStore.open(path), SqliteConversationStore.open(path)];
});
