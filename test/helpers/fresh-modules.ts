import { afterAll, vi } from 'vitest';

// The test workers run many files in one process (vitest.config.ts: isolate: false). After each file the
// module registry is reset, so the next file loads its own copy of src/ and test/helpers/ — no module state
// (caches, the shared command-timeout watchdog, the wall-clock offset, a fake timer's handle) carries over —
// while the packages in node_modules, most of what a file imports, stay loaded.
afterAll(() => {
  vi.resetModules();
});
