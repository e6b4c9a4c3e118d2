import type { Reporter, TestModule } from "vitest/node";

/**
 * Prints the plain closing line CI reads: `N passed, N failed` (and `, N skipped` when any),
 * counted from vitest's own results. Failed also counts test files that failed outside their
 * tests (could not load, a set-up hook threw or timed out) and unhandled errors, so a crash never
 * reads as green.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      let moduleFailed = 0;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") moduleFailed++;
        else skipped++;
      }
      // A file that failed without a failed test (it could not load, or a beforeAll hook threw or
      // timed out and every test was skipped) counts as one failure.
      failed += moduleFailed === 0 && mod.state() === "failed" ? 1 : moduleFailed;
    }
    failed += unhandledErrors.length;
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`);
  }
}
