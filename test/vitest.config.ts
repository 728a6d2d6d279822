import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

// The order files start in. Vitest starts the files it has timings for longest first, and others largest first:
// a fresh clone (CI) has none, and the packaging test (85 s under load, one process after another) started last
// of 105 files once bounded the whole run's wall time. So the longest files start first, by two lists, each
// longest first (measured alone, each file in a vitest run of its own):
// - BUSY: files that keep a core busy most of their time (the type check's compiler, builds, child processes);
// - WAITING: files that mostly wait (on TTLs running out, retry delays, children exiting by themselves): each
//   alone, 2.4–20 s of its wall time with no CPU in use.
// They start interleaved, the busy ones spread evenly between the waiting ones, so that while one worker waits
// the two cores have work: started busy first and the waiting ones after, a run's middle 50 s kept the cores
// 33–54 % busy, and the suite took 178 and 191 s against 171–178 s interleaved (clean runs one after the other).
const BUSY = [
  'test/typecheck.test.ts',
  'test/package/packaging.test.ts',
  'test/fleet/collector.test.ts',
  'test/lock/double-order.test.ts',
  'test/docs/examples.test.ts',
  'test/cli/code.test.ts',
  'test/watch/lease-bullmq.test.ts',
  'test/report/html-browser.test.ts',
  'test/fleet/stream-sink-large-seal.test.ts',
  'test/record/sqlite-recorder.test.ts',
  'test/cli/report.test.ts',
  'test/watch/notification-settings.test.ts',
  'test/record/aggregation.test.ts',
  'test/architecture.test.ts',
  'test/record/seal-reuse-stress.test.ts',
  'test/cli/check-apply.test.ts',
];
const WAITING = [
  'test/instrument/peers.test.ts',
  'test/record/process-lifetime.test.ts',
  'test/lock/redis-lock.test.ts',
  'test/watch/lease-libraries.test.ts',
  'test/watch/watch.test.ts',
  'test/instrument/leases.test.ts',
  'test/cli/prometheus.test.ts',
  'test/instrument/close-in-flight.test.ts',
  'test/watch/metrics-port.test.ts',
  'test/cli/connect-errors.test.ts',
  'test/instrument/cluster-and-failures.test.ts',
];
const renamed = [...BUSY, ...WAITING].filter((file) => !existsSync(join(ROOT, file)));
if (renamed.length > 0) throw new Error(`vitest.config.ts orders files that are not there: ${renamed.join(', ')}`);
/** The first busy file (the type check), then each waiting file followed by its even share of the other busy ones. */
const share = (BUSY.length - 1) / WAITING.length;
const FIRST = [
  BUSY[0]!,
  ...WAITING.flatMap((file, i) => [file, ...BUSY.slice(1 + Math.round(i * share), 1 + Math.round((i + 1) * share))]),
];

/** Vitest's order, with {@link FIRST} moved to the front. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = FIRST.indexOf(relative(ROOT, file.moduleId));
      return at === -1 ? FIRST.length : at;
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
