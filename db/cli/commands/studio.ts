import { spawn } from 'node:child_process';
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { startStudio } from '../../studio/server.js';
import { dbPathOf, note, print } from '../context.js';
import { openStudioSource } from '../database.js';
import { CliError } from '../errors.js';

interface StudioOptions {
  port: number;
  host: string;
  open?: boolean;
  write?: boolean;
}

const DEFAULT_PORT = 4983;

/**
 * `colloquy studio`: a local web page to look through the captured conversations, on a
 * read-only connection (`--write` only to forget a person from the page).
 */
export function registerStudio(program: Command): void {
  program
    .command('studio')
    .description('serve a local web page to look through conversations, runs and prompts')
    .option('--port <n>', `port to listen on (0: any free port)`, port, DEFAULT_PORT)
    .option(
      '--host <address>',
      'address to bind (default 127.0.0.1: this machine only)',
      '127.0.0.1',
    )
    .option('--open', 'open the page in the default browser')
    .option('--write', 'allow forgetting a person from the page (asks for confirmation)')
    .addHelpText(
      'after',
      `
Every request needs the access token in the printed address (a cookie keeps it after the
first visit). Stop with Ctrl-C.

Examples:
  $ colloquy studio
  $ colloquy studio --db /var/lib/bot.db --port 8080 --open
  $ colloquy studio --db postgres://postgres@127.0.0.1:5432/bot`,
    )
    .action(async (options: StudioOptions, command: Command) => {
      const path = dbPathOf(command);
      const { source, where } = await openStudioSource(path, { write: options.write === true });
      let studio;
      try {
        studio = await startStudio({ source, host: options.host, port: options.port });
      } catch (error) {
        await source.close();
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE') {
          throw new CliError(`port ${options.port} is in use; pass --port <n> (0 for any)`, {
            cause: error,
          });
        }
        throw error;
      }
      print(`colloquy studio: ${studio.url}`);
      note(
        `reading ${where}${options.write ? ' (forget enabled: --write)' : ' read-only'}; Ctrl-C stops`,
      );
      if (options.host !== '127.0.0.1' && options.host !== 'localhost') {
        note(
          `listening on ${options.host}: anyone who can reach it and has the address can read it`,
        );
      }
      if (options.open) openBrowser(studio.url);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await studio.close();
      await source.close();
    });
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new InvalidArgumentError('expected a port number, 0-65535');
  }
  return n;
}

function openBrowser(url: string): void {
  const command =
    process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  const child = spawn(command, [url], { detached: true, stdio: 'ignore' });
  child.on('error', () => note(`could not open a browser; open ${url}`));
  child.unref();
}
