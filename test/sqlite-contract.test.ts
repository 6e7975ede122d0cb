import { SqliteConversationStore } from 'colloquy/sqlite';
import { describeStoreContract } from './store-contract.js';

describeStoreContract('SqliteConversationStore (:memory:)', () =>
  SqliteConversationStore.open(':memory:'),
);
