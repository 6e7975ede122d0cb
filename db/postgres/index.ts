/// <reference types="node" preserve="true" />
/**
 * `colloquy/postgres`: the Postgres conversation store and its schema, for bots that run as
 * several instances on one database (docs/postgres.md).
 *
 * @example
 * ```ts
 * import { PostgresConversationStore } from 'colloquy/postgres';
 * const store = await PostgresConversationStore.open(process.env.COLLOQUY_DB!);
 * ```
 */
export { PostgresConversationStore, type PostgresStoreOptions } from './store.js';
export {
  migratePostgresDatabase,
  postgresMigrationsFolder,
  redactUrl,
  withClient,
} from './connection.js';
export { PG_MESSAGE_COLUMNS, positional } from './statements.js';
export { copyFromSqlite, type CopyReport } from './copy.js';
export { PostgresStudioSource } from './studio.js';
export * as schema from './schema.js';
