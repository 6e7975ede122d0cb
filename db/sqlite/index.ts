/// <reference types="node" preserve="true" />
/**
 * `colloquy/sqlite`: the SQLite conversation store and its schema.
 *
 * @example
 * ```ts
 * import { SqliteConversationStore } from 'colloquy/sqlite';
 * const store = new SqliteConversationStore({ path: './colloquy.db' });
 * ```
 */
export { SqliteConversationStore, type SqliteStoreOptions } from './store.js';
export { migrationsFolder } from './connection.js';
export type { SqliteDurability } from './pragmas.js';
export { migrateDatabase, type MigrationReport } from './migrate-file.js';
export { SqliteStudioSource } from './studio.js';
export { fromValues, toMessage, type SelectedMessageRow } from '../rows.js';
export { MESSAGE_COLUMNS } from './statements.js';
export * as schema from './schema.js';
