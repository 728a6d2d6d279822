import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

// The type check (the compiler's CPU overlaps the other files' waits), then the files that took longest in a
// measured run, longest first. Vitest starts the files it has timings for longest first, and others largest
// first: a fresh clone (CI) has no timings, and the packaging test (85 s under load, one process after
// another) started last of 105 files bounded the whole run's wall time.
const LONGEST = [
  'test/typecheck.test.ts',
  'test/package/packaging.test.ts',
  'test/watch/notification-settings.test.ts',
  'test/lock/double-order.test.ts',
  'test/fleet/collector.test.ts',
  'test/record/process-lifetime.test.ts',
];

/** Vitest's order, with {@link LONGEST} moved to the front. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = LONGEST.indexOf(relative(ROOT, file.moduleId));
      return at === -1 ? LONGEST.length : at;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  root: ROOT,
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/fresh-modules.ts', 'test/helpers/no-leftover-connections.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most test time is spent waiting (on Redis, child processes, timers), not computing: three files at once
    // on two cores ran the suite in 190 s against 278 s with two, side by side on the same loaded machine.
    maxWorkers: 3,
    // Each worker runs its files one after another in one process, with the modules they share loaded once: a
    // fresh process per file cost 316 s of CPU for the suite against 247 s, one run after the other on the same
    // (loaded) machine. The tests restore what they change in the process (env, cwd, listeners, spies, timers),
    // and each file gets fresh copies of our own modules (helpers/fresh-modules.ts).
    isolate: false,
    sequence: { sequencer: LongestFirst },
  },
});
