import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** The suites that SIGKILL and restart example bots under traffic, and take Postgres down. */
export const CRASH_SUITES = ['test/crash/**'];

/**
 * What `npm run test:quick` (`vitest run --mode quick`) leaves out: the crash suites, which kill
 * and restart bots under traffic for minutes, the one that drives Chromium, and the one that
 * packs the package and type-checks a consumer project against it. The README says so.
 */
export const FULL_SUITE_ONLY = [
  ...CRASH_SUITES,
  'test/db/studio/browser.test.ts',
  'test/consumer.test.ts',
];

/**
 * Test files at a time, but for the crash suites: most of a file's time is spent waiting on a
 * child process, a socket or a database, so three keep two cores busy. `--maxWorkers` on the
 * command line overrides it.
 */
const WORKERS = 3;

// Tests import the public entry points by name, resolved to the sources so a test run
// needs no build. test/exports.test.ts checks the built package serves the same names.
const resolve = {
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
};

/**
 * Two projects. `suites` runs every file but the crash suites three at a time (`--mode quick`
 * also leaves out the rest of FULL_SUITE_ONLY); `crash` then runs the crash suites one file at
 * a time, alone on the machine, after `suites` has finished (vitest runs a project limited to
 * one worker after the others). The global setup (test/services.setup.ts) runs once, for the
 * root, and every project reads what it provides.
 */
export default defineConfig(({ mode }) => {
  const quick = mode === 'quick';
  const suites: TestProjectInlineConfiguration = {
    resolve,
    test: {
      name: 'suites',
      include: ['test/**/*.test.ts'],
      exclude: [...configDefaults.exclude, ...(quick ? FULL_SUITE_ONLY : CRASH_SUITES)],
      // A test takes longer beside two other files, so its time limit (a hang detector, not a
      // speed check) is longer too.
      testTimeout: 60_000,
      hookTimeout: 60_000,
    },
  };
  const crash: TestProjectInlineConfiguration = {
    resolve,
    test: {
      name: 'crash',
      include: CRASH_SUITES.map((glob) => `${glob}/*.test.ts`),
      fileParallelism: false,
      testTimeout: 20_000,
      hookTimeout: 20_000,
    },
  };
  return {
    test: {
      maxWorkers: WORKERS,
      globalSetup: ['test/services.setup.ts'],
      reporters: ['default', './test/skips.reporter.ts'],
      projects: quick ? [suites] : [suites, crash],
    },
  };
});
