#!/usr/bin/env node
import { run } from './main.js';

// A reader that goes away (`colloquy export | head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

process.exitCode = await run(process.argv);
