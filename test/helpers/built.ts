import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A plain-JavaScript copy of src/ and test/helpers/, transpiled file by file (no bundle, the
 * layout kept, so `../../package.json` and `./thread.js` resolve as beside the sources) at the
 * start of each test run by the global setup. The child processes the tests start run from it:
 * `node --import tsx` costs about 0.95 s of CPU per child against about 0.3 s for the same
 * file as JavaScript, and a recorder's writer thread started through tsx about 0.6 s against 0.15 s.
 * It lives inside the repository (test/artifacts/, ignored by git) so that packages resolve from
 * the repository's node_modules.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BUILT = join(ROOT, 'test/artifacts/built');

/** The transpiled copy of a source file, `src/cli/main.ts` or `test/helpers/x.ts` (relative to the repository), as a path. */
export function built(source: string): string {
  return join(BUILT, source.replace(/\.ts$/, '.js'));
}

function typeScriptFiles(under: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(under)) {
    const path = join(under, name);
    if (statSync(path).isDirectory()) found.push(...typeScriptFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

/** Transpiles src/ and test/helpers/ into the copy that {@link built} names, replacing the last run's. */
export async function buildForChildren(): Promise<void> {
  rmSync(BUILT, { recursive: true, force: true });
  await build({
    entryPoints: [...typeScriptFiles(join(ROOT, 'src')), ...typeScriptFiles(join(ROOT, 'test/helpers'))],
    outbase: ROOT,
    outdir: BUILT,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
  for (const file of readdirSync(join(ROOT, 'test/helpers')).filter((name) => /\.(mjs|py)$/.test(name))) {
    copyFileSync(join(ROOT, 'test/helpers', file), join(BUILT, 'test/helpers', file));
  }
  // The command line reads its version from ../../package.json, relative to itself.
  mkdirSync(BUILT, { recursive: true });
  copyFileSync(join(ROOT, 'package.json'), join(BUILT, 'package.json'));
}
