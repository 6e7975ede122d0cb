import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * What `npm run test:quick` (`vitest run --mode quick`) leaves out: the suites that kill and
 * restart bots under traffic for minutes, the one that drives Chromium, and the one that packs
 * the package and type-checks a consumer project against it. The README says so.
 */
export const FULL_SUITE_ONLY = [
  'test/crash/**',
  'test/db/studio/browser.test.ts',
  'test/consumer.test.ts',
];

/**
 * `--mode quick` runs three test files at once where the full run keeps vitest's default (one
 * fewer than the cores: one on a 2-core machine). Most of a file's time is spent waiting on a
 * child process, a socket or a database, so three keep two cores busy. A test then takes
 * longer, so its time limit (a hang detector, not a speed check) is longer too.
 */
const QUICK = { maxWorkers: 3, testTimeout: 60_000, hookTimeout: 60_000 };

// Tests import the public entry points by name, resolved to the sources so a test run
// needs no build. test/exports.test.ts checks the built package serves the same names.
export default defineConfig(({ mode }) => ({
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
    ...(mode === 'quick' && { exclude: [...configDefaults.exclude, ...FULL_SUITE_ONLY], ...QUICK }),
  },
}));
