import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSC = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));

/** `tsc -p test/tsconfig.json`: its exit code and what it printed (the errors, one a line). */
function typeCheck(): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [TSC, '-p', 'test/tsconfig.json', '--pretty', 'false'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}`.trim() }),
    );
  });
}

// The strict type check of src/, the tests and the fixtures, as a test that starts first (see vitest.config.ts):
// the compiler works while the other files' tests wait on Redis and child processes, where `tsc && vitest` ran it
// alone before them (16 s of a quiet 2-core machine's wall time). Its errors are this test's failure message.
it('src, tests and fixtures type-check under the strict settings', async () => {
  const { code, output } = await typeCheck();
  expect(output.split('\n').filter(Boolean)).toEqual([]);
  expect(code).toBe(0);
}, 300_000);
