import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Tests import the public entry points by name, resolved to the sources so a test run
// needs no build. test/exports.test.ts checks the built package serves the same names.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^colloquy$/, replacement: here('./index.ts') },
      { find: /^colloquy\/sqlite$/, replacement: here('./db/sqlite/index.ts') },
      { find: /^colloquy\/redis$/, replacement: here('./db/redis/index.ts') },
      { find: /^colloquy\/postgres$/, replacement: here('./db/postgres/index.ts') },
      { find: /^colloquy\/console$/, replacement: here('./channels/console/index.ts') },
      { find: /^colloquy\/slack$/, replacement: here('./channels/slack/index.ts') },
      { find: /^colloquy\/discord$/, replacement: here('./channels/discord/index.ts') },
      { find: /^colloquy\/telegram$/, replacement: here('./channels/telegram/index.ts') },
      { find: /^colloquy\/testing$/, replacement: here('./channels/testing/index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/services.setup.ts'],
    reporters: ['default', './test/skips.reporter.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
