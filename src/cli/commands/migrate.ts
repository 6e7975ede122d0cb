import type { Command } from 'commander';
import { openStore } from '../database.js';
import { dbPathOf, print } from '../context.js';

/**
 * `colloquy migrate`: brings an existing database up to this version's schema (what a bot
 * does when it starts). Read commands never migrate; they ask for this instead.
 */
export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description("upgrade an existing database to this colloquy's schema")
    .action(async (_options: unknown, command: Command) => {
      const path = dbPathOf(command);
      const store = await openStore(path, { write: true });
      await store.close();
      print(`${path} is up to date`);
    });
}
