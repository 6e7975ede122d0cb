import type { Command } from 'commander';
import { assertDatabaseExists } from '../database.js';
import { dbPathOf, print } from '../context.js';
import { isPostgresUrl } from '../../default-store.js';

/**
 * `colloquy migrate`: brings an existing database up to this version's schema (what a bot
 * does when it starts), restores any view that was dropped, and says what it did. Read
 * commands never migrate; they ask for this instead.
 */
export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description("upgrade an existing database to this colloquy's schema, restoring its views")
    .action(async (_options: unknown, command: Command) => {
      const path = dbPathOf(command);
      if (isPostgresUrl(path)) {
        const { migratePostgresDatabase, redactUrl } = await import('../../postgres/index.js');
        const applied = await migratePostgresDatabase(path);
        for (const tag of applied) print(`applied migration ${tag}`);
        print(`${redactUrl(path)} ${applied.length > 0 ? 'is now' : 'is'} up to date`);
        return;
      }
      assertDatabaseExists(path);
      const { migrateDatabase } = await import('../../sqlite/index.js');
      const { applied, restoredViews } = migrateDatabase(path);
      for (const tag of applied) print(`applied migration ${tag}`);
      for (const view of restoredViews) print(`restored view ${view}`);
      const changed = applied.length + restoredViews.length > 0;
      print(`${path} ${changed ? 'is now' : 'is'} up to date`);
    });
}
