import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most test time is spent waiting (on Redis, child processes, timers), not computing: three files at once
    // on two cores ran the suite in 190 s against 278 s with two, side by side on the same loaded machine.
    maxWorkers: 3,
  },
});
