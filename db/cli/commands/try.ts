import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { CliError } from '../errors.js';

/**
 * `colloquy try <platform>`: runs the packaged `examples/try.js`, which starts the platform's
 * fake, the example bot on it and this terminal as a person. It runs as its own program
 * because it needs channels/ and examples/, which the CLI does not import.
 */
export function registerTry(program: Command): void {
  program
    .command('try <platform>')
    .description(
      'talk to the example bot on a fake platform, no account needed (telegram, slack, discord)',
    )
    .addHelpText(
      'after',
      '\nExample:\n  $ colloquy try telegram   # then /group, @mentions, /reply',
    )
    .action(async (platform: string) => {
      const script = fileURLToPath(new URL('../../../examples/try.js', import.meta.url));
      if (!existsSync(script)) {
        throw new CliError(
          `colloquy try needs the built package (${script} is missing: npm run build)`,
        );
      }
      const child = spawn(process.execPath, [script, platform], { stdio: 'inherit' });
      // Ctrl-C reaches the child too (one process group); it decides when to end.
      const ignore = () => {};
      process.on('SIGINT', ignore);
      const code = await new Promise<number>((resolve) =>
        child.on('exit', (status, signal) => resolve(status ?? (signal === null ? 1 : 130))),
      );
      process.off('SIGINT', ignore);
      if (code !== 0) process.exit(code);
    });
}
