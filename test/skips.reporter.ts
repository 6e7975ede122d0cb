import { relative } from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';

declare module 'vitest' {
  interface TaskMeta {
    /** Why a suite cannot run on this machine; the end of the run repeats it. */
    skipReason?: string;
  }
}

/**
 * Says at the end of a run what it did not cover and why: suites skipped for a missing
 * browser, service or privilege (`{ skip, meta: { skipReason } }` on their `describe`, or
 * `ctx.skip(reason)`), and the services the global setup found unreachable. A green run on
 * a workstation without Chromium or Redis then does not pass for a full one.
 *
 * @example
 * describe('studio in Chromium', { skip: !present, meta: { skipReason: 'no Chromium' } }, () => {});
 */
export default class SkipsReporter implements Reporter {
  private vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const vitest = this.vitest;
    if (vitest === undefined) return;
    const lines = skippedSuites(testModules, vitest.config.root);
    const services = vitest.getRootProject().getProvidedContext();
    for (const [name, state] of Object.entries(services)) {
      if (state !== null && typeof state === 'object' && 'unreachable' in state) {
        lines.push(`the ${name} suites: ${String(state.unreachable)}`);
      }
    }
    if (lines.length === 0) return;
    vitest.logger.log('\n Not run here (the full suite needs them):');
    for (const line of lines) vitest.logger.log(`   - ${line}`);
  }
}

/** `file, N tests: reason`, one line per file and reason. */
function skippedSuites(testModules: ReadonlyArray<TestModule>, root: string): string[] {
  const groups = new Map<string, { file: string; reason: string; count: number }>();
  for (const module of testModules) {
    for (const test of module.children.allTests('skipped')) {
      const result = test.result();
      const reason =
        test.meta().skipReason ?? (result.state === 'skipped' ? result.note : undefined);
      if (reason === undefined) continue;
      const file = relative(root, module.moduleId);
      const group = groups.get(`${file}\0${reason}`) ?? { file, reason, count: 0 };
      group.count += 1;
      groups.set(`${file}\0${reason}`, group);
    }
  }
  return [...groups.values()].map(
    ({ file, reason, count }) => `${file}, ${count} test${count === 1 ? '' : 's'}: ${reason}`,
  );
}
