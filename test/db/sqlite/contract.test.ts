import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { afterAll } from 'vitest';
import { describeStoreContract } from '../../contracts/store-contract.js';

describeStoreContract('SqliteConversationStore (:memory:, inline writes)', () =>
  SqliteConversationStore.open(':memory:'),
);

// A file, in WAL mode.
const dir = mkdtempSync(join(tmpdir(), 'colloquy-contract-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
describeStoreContract('SqliteConversationStore (file)', () =>
  SqliteConversationStore.open(join(dir, `contract-${++files}.db`)),
);
