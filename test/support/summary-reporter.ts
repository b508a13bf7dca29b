/**
 * Ends every run with one plain line, `N passed, N failed` (`, N skipped` when some were),
 * that any CI can read, whatever it knows of vitest's own summary.
 */
import type { Reporter } from 'vitest/reporters';

interface TaskLike {
  type: string;
  mode?: string;
  result?: { state?: string };
  tasks?: TaskLike[];
}

function count(tasks: readonly TaskLike[], totals: { passed: number; failed: number; skipped: number }): void {
  for (const task of tasks) {
    if (task.tasks) count(task.tasks, totals);
    if (task.type !== 'test') continue;
    const state = task.result?.state;
    if (state === 'pass') totals.passed += 1;
    else if (state === 'fail') totals.failed += 1;
    else totals.skipped += 1;
  }
}

export default class SummaryReporter implements Reporter {
  onFinished(files: readonly TaskLike[] = [], errors: readonly unknown[] = []): void {
    const totals = { passed: 0, failed: 0, skipped: 0 };
    count(files, totals);
    // An error outside any test (a crashed file, an unhandled rejection) fails the run too.
    const failed = totals.failed + errors.length + files.filter((file) => file.result?.state === 'fail' && !file.tasks?.length).length;
    const skipped = totals.skipped > 0 ? `, ${totals.skipped} skipped` : '';
    process.stdout.write(`\n${totals.passed} passed, ${failed} failed${skipped}\n`);
  }
}
