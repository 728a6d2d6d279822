import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, onTestFinished } from 'vitest';

/**
 * A temp folder removed after the test that made it, or, made outside a test (at file or describe
 * level), after the file's tests. An `afterAll` registered from inside a running test never runs,
 * which left such folders behind in /tmp.
 */
export function tempDir(prefix = 'ttl-advisor-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    onTestFinished(remove);
  } catch {
    // Not inside a test: onTestFinished refuses, and the file's end removes it.
    afterAll(remove);
  }
  return dir;
}
