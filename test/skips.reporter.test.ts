import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const scratch = `${root}.vitest-tmp/skips`;
const run = promisify(execFile);

afterAll(() => rm(scratch, { recursive: true, force: true }));

describe('the end of a test run', () => {
  it('lists the suites skipped for something missing, with the reason', async () => {
    // Given a suite skipped for a missing browser, one skipped by ctx.skip(reason), and one
    // skipped without a reason (a test that does not apply here)
    await mkdir(scratch, { recursive: true });
    await writeFile(
      `${scratch}/missing.test.ts`,
      `import { describe, it } from 'vitest';
describe('in Chromium', { skip: true, meta: { skipReason: '/usr/bin/chromium is missing' } }, () => {
  it('opens', () => {});
  it('closes', () => {});
});
it('needs a service', (ctx) => ctx.skip('Redis does not answer'));
it.skipIf(true)('runs as root only', () => {});
`,
    );
    await writeFile(`${scratch}/vitest.config.ts`, 'export default {};\n');

    // When vitest runs it with the project's reporter
    const { stdout } = await run(
      process.execPath,
      [
        `${root}node_modules/vitest/vitest.mjs`,
        'run',
        '--root',
        scratch,
        '--reporter=default',
        `--reporter=${root}test/skips.reporter.ts`,
      ],
      { cwd: root, env: { ...process.env, NO_COLOR: '1', CI: '' }, timeout: 60_000 },
    );

    // Then the last lines say what was not run and why, and leave out the reason-less skip
    const report = stdout.slice(stdout.indexOf('Not run here'));
    expect(report).toContain('missing.test.ts, 2 tests: /usr/bin/chromium is missing');
    expect(report).toContain('missing.test.ts, 1 test: Redis does not answer');
    expect(report).not.toContain('root only');
  }, 90_000);
});
