import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { DEMO_START_MS, DEMO_STORIES } from '../../fixtures/generate.js';
import { runCli } from '../helpers/cli.js';
import { buildDb } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

/**
 * `check --code` and `apply --code` on the fixture service (fixtures/code-service), with the demo
 * recorder's data: payment's 5 s expires (16.1 s), order's 5 s is fine (apply writes 3 s), the
 * report mutex's 5 min is too long. redis-semaphore stores its key as `mutex:…`: that data is
 * recorded under its own instances, in a second database.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = join(ROOT, 'fixtures/code-service');
const NOW = DEMO_START_MS + 48 * 3_600_000;
const dir = realpathSync(tempDir('ttl-advisor-code-'));
const demo = buildDb(dir, 'demo.db', { patterns: DEMO_STORIES });
const report = DEMO_STORIES['report:lock:tenant:{id}']!;
const mutexes = buildDb(dir, 'mutex.db', {
  instancePrefix: 'reports',
  patterns: { 'mutex:report:lock:tenant:{id}': { ...report, key: (id) => `mutex:report:lock:tenant:${id % 40}` } },
});
const NO_POLICY = join(dir, 'no-policy.json');
const data = ['--db', demo, '--db', mutexes];

/** The sites `apply --code` leaves, each with its reason (a computed TTL the data finds fine, computed.ts:23, is not one). */
const LEFT_ALONE = [
  'left alone src/computed.ts:18 withLock (15 s): key not mapped: keyFor(job) is computed in a way that cannot be read statically',
  'left alone src/computed.ts:33 new RedisLock payment:lock:order:{id} (4 s → 16.1 s): the TTL is computed (BASE_TTL_MS * 2), not a literal: change it by hand',
  'skipped src/mail.cts:9 RedisLock.acquire mail:lock:user:{id} (5 s): too few samples: 119 of 299 hold times',
  'left alone src/worker.ts:5 new Worker bull:emails:{id}:lock (30 s): no data for this pattern in the window',
];

/** What `apply --code` changes in the fixture: the literals' characters only. */
const DIFF = `--- a/src/legacy-ttl.cjs
+++ b/src/legacy-ttl.cjs
@@ -1,2 +1,2 @@
 // Lock TTLs of the older code, in milliseconds.
-exports.PAYMENT_TTL = 5000;
+exports.PAYMENT_TTL = 16100;
--- a/src/orders.ts
+++ b/src/orders.ts
@@ -5,7 +5,7 @@
 
 /** Reserves stock of a product (node-redlock 5: \`using\` renews the lock while the routine runs). */
 export async function reserve(productId: number, reserveStock: () => Promise<void>): Promise<void> {
-  await redlock.using([\`order:lock:product:\${productId}\`], 5 * 1000, async () => {
+  await redlock.using([\`order:lock:product:\${productId}\`], 3 * 1000, async () => {
     await reserveStock();
   });
 }
@@ -20,4 +20,4 @@
   }
 }
 
-const RESTOCK_TTL_MS = 5000;
+const RESTOCK_TTL_MS = 3000;
--- a/src/reports.ts
+++ b/src/reports.ts
@@ -8,7 +8,7 @@
 export async function buildReport(tenantId: number, build: () => Promise<void>): Promise<void> {
   const mutex = new Mutex(redis, REPORT_KEY + tenantId, {
     lockTimeout: REPORT_LOCK_TTL_MS,
-    refreshInterval: 240_000, // renew at 80 % of the lease
+    refreshInterval: 2_400, // renew at 80 % of the lease
   });
   await mutex.acquire();
   try {
--- a/src/ttl.ts
+++ b/src/ttl.ts
@@ -1,12 +1,12 @@
 // The service's lock TTLs, in one module (imported where the locks are taken).
 
 /** The payment provider answers within seconds; the lock must outlive the call. */
-export const PAYMENT_LOCK_TTL_MS = 5_000;
+export const PAYMENT_LOCK_TTL_MS = 16_100;
 
 /** One TTL for the cart and the inventory locks: shared by two patterns, it moves for both, to what the neediest needs. */
-export const LOCK_TTL_MS = 10_000;
+export const LOCK_TTL_MS = 3_000;
 
 /** Reports of a tenant are built in one go. */
-export const REPORT_LOCK_TTL_MS = 5 * 60 * 1000; // 5 minutes, to be safe
+export const REPORT_LOCK_TTL_MS = 3 * 1000; // 5 minutes, to be safe
 
 export const BASE_TTL_MS = 2_000;
`;

/**
 * The type errors in a service's own files under its tsconfig (strict), one a line; none when it checks. In
 * process, and only the service's files are checked (what they use of ttl-advisor's source is resolved as
 * needed): `tsc -p` in a child also checked all of src/, 12 s of CPU for a test about the fixture's code.
 */
function typeErrorsOf(project: string, oldProgram?: ts.Program): { errors: string[]; program: ts.Program } {
  const config = ts.getParsedCommandLineOfConfigFile(join(project, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => expect.fail(String(d.messageText)) })!;
  // `oldProgram`: the files that did not change are not parsed again.
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options, ...(oldProgram && { oldProgram }) });
  const own = program.getSourceFiles().filter((f) => f.fileName.startsWith(join(project, 'src') + sep));
  expect(own.length).toBeGreaterThan(3);
  const diagnostics = [...config.errors, ...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
  for (const file of own) diagnostics.push(...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file));
  return { errors: diagnostics.map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`), program };
}

/** A git repository holding a copy of the fixture, its node_modules linked (untracked) so that `tsc` resolves the packages. */
function copyOfFixture(name: string): string {
  const copy = join(dir, name);
  cpSync(FIXTURE, copy, { recursive: true });
  // The copy lives outside the repository: ttl-advisor and the redlock types by absolute path.
  const tsconfig = JSON.parse(readFileSync(join(copy, 'tsconfig.json'), 'utf8')) as { compilerOptions: { paths: Record<string, string[]> }; include: string[] };
  tsconfig.compilerOptions.paths = { 'ttl-advisor': [join(ROOT, 'src/index.ts')] };
  tsconfig.include = ['src', join(ROOT, 'test/types/redlock.d.ts')];
  writeFileSync(join(copy, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2) + '\n');
  writeFileSync(join(copy, '.gitignore'), 'node_modules\n');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: copy, stdio: 'pipe' });
  git('init', '-q');
  git('add', '.');
  git('commit', '-q', '-m', 'fixture');
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  return copy;
}

function lineOf(file: string, line: number): string {
  return readFileSync(file, 'utf8').split('\n')[line - 1]!;
}

describe('ttl-advisor check --code', () => {
  it('fails on the lines where a TTL must rise, and lists every site with its state', async () => {
    const { code, stdout, stderr } = await runCli(['check', '--code', join(FIXTURE, 'src'), '--policy', NO_POLICY, ...data], NOW);
    expect(stderr).toBe('');
    expect(code).toBe(1);
    expect(stdout.split('\n')[0]).toBe('### ttl-advisor check --code: fails ❌ — 2 failing, 7 to look at');
    // The demo's report lock is in the samples with no site in the code (the code's is redis-semaphore's, `mutex:…`): listed, judged as check judges it.
    expect(stdout).toMatch(/^- `report:lock:tenant:\{id\}`: 🟡 too long — 4,318 samples\. .* Why no site: in the samples, not found in the code: no call site's key reads as this pattern/m);
    const row = (site: string) => stdout.split('\n').find((l) => l.startsWith(`| \`${site}`)) ?? '';
    expect(row('fixtures/code-service/src/payment.ts:9')).toMatch(/`payment:lock:order:\{id\}` \| 5 s \| `fixtures\/code-service\/src\/ttl\.ts:4` \| \*\*16\.1 s\*\* \|.*🔴 expired · \*\*fails the check\*\* \|$/);
    expect(row('fixtures/code-service/src/legacy.cjs:11')).toMatch(/\*\*16\.1 s\*\*.*\*\*fails the check\*\*/);
    expect(row('fixtures/code-service/src/orders.ts:8')).toMatch(/🟢 ok · `apply --code` writes 3 s \|$/);
    expect(row('fixtures/code-service/src/reports.ts:9')).toMatch(/`mutex:report:lock:tenant:\{id\}` \| 5 min .*🟡 too long · `apply --code` writes 3 s \|$/);
    // Left alone, with the reason: a computed key, a computed TTL, a shared constant.
    expect(stdout).toMatch(/key not mapped: keyFor\\\(job\\\) is computed/);
    // One constant for two patterns: one TTL for both, decided by the neediest (both want 3 s here).
    expect(stdout).toMatch(/raw\.ts:8`: One TTL for 2 data patterns \(cart\\:lock\\:\\\{uuid\\\}, inventory\\:lock\\:global\): the most demanding decides\./);
    expect(stdout).toMatch(/computed\.ts:33`: \d+ lock\(s\) expired.*the TTL is computed \(BASE\\_TTL\\_MS \\\* 2\)/);
  });

  it('--format github annotates the lines where the TTLs are declared', async () => {
    const summaryFile = join(dir, 'summary.md');
    process.env.GITHUB_STEP_SUMMARY = summaryFile;
    let result: Awaited<ReturnType<typeof runCli>>;
    try {
      result = await runCli(['check', '--code', join(FIXTURE, 'src'), '--policy', NO_POLICY, ...data, '--format', 'github'], NOW);
    } finally {
      delete process.env.GITHUB_STEP_SUMMARY;
    }
    const { code, stdout } = result;
    expect(code).toBe(1);
    expect(readFileSync(summaryFile, 'utf8')).toMatch(/^### ttl-advisor check --code: fails ❌/);
    const annotations = stdout.split('\n').filter((l) => l.startsWith('::'));
    const at = (level: string) => annotations.filter((a) => a.startsWith(`::${level} file=`)).map((a) => /file=([^,]+),line=(\d+)/.exec(a)!.slice(1).join(':'));
    // Errors first: the payment TTL in ttl.ts (imported by payment.ts) and in legacy-ttl.cjs (required by legacy.cjs).
    expect(at('error')).toEqual(['fixtures/code-service/src/legacy-ttl.cjs:2', 'fixtures/code-service/src/ttl.ts:4']);
    expect(annotations[0]).toMatch(/^::error file=fixtures\/code-service\/src\/legacy-ttl\.cjs,line=2,title=payment%3Alock%3Aorder%3A\{id\}%3A expired::redlock\.lock at fixtures\/code-service\/src\/legacy\.cjs:11: /);
    // Control: those lines hold the literals.
    expect(lineOf(join(FIXTURE, 'src/ttl.ts'), 4)).toContain('5_000');
    expect(lineOf(join(FIXTURE, 'src/legacy-ttl.cjs'), 2)).toContain('5000');
    expect(at('warning')).toContain('fixtures/code-service/src/ttl.ts:7'); // the shared constant
    expect(at('warning')).toContain('fixtures/code-service/src/ttl.ts:10'); // the report mutex's 5 min
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('ttl-advisor check --code: fails ❌ — 2 failing, 7 to look at');
    // A data pattern no site governs is in the summary (its annotation, on no line, is past the ten shown).
    expect(readFileSync(summaryFile, 'utf8')).toMatch(/^- `report:lock:tenant:\{id\}`: 🟡 too long/m);
  });

  it('a policy entry for the pattern wins: the code site is shown as overridden by the policy', async () => {
    const policy = join(dir, 'ttl-advisor.json');
    writeFileSync(policy, JSON.stringify({ locks: { 'payment:lock:order:{id}': { ttlMs: 16_100 } } }));
    const { code, stdout } = await runCli(['check', '--code', join(FIXTURE, 'src'), '--policy', policy, ...data], NOW);
    expect(code).toBe(0);
    expect(stdout).toMatch(/payment\.ts:9` \| withLock \| `payment:lock:order:\{id\}` .*\| overridden by the policy \|$/m);
    expect(stdout).not.toMatch(/fails the check/);
  });
});

describe('ttl-advisor apply --code', () => {
  it('edits only the literals, prints a diff git apply takes, lists what it leaves; the service still type-checks; twice changes nothing; check then passes', async () => {
    const copy = copyOfFixture('apply');
    const args = ['--code', join(copy, 'src'), '--policy', NO_POLICY, ...data];

    const dry = await runCli(['apply', ...args, '--dry-run'], NOW);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/\(dry run: nothing written\)\n$/);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: copy, encoding: 'utf8' })).toBe('');
    const diff = dry.stdout.slice(0, dry.stdout.indexOf('\nchanged ') + 1);
    writeFileSync(join(dir, 'code.patch'), diff);
    execFileSync('git', ['apply', '--check', join(dir, 'code.patch')], { cwd: copy });

    const { code, stdout, stderr } = await runCli(['apply', ...args], NOW);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(diff);
    expect(diff).toBe(DIFF);
    const lines = stdout.slice(diff.length).split('\n');
    expect(lines.filter((l) => l.startsWith('changed '))).toEqual([
      'changed src/legacy-ttl.cjs:2 ttl (payment:lock:order:{id}): 5 s → 16.1 s',
      'changed src/orders.ts:8 duration (order:lock:product:{id}): 5 s → 3 s',
      'changed src/orders.ts:23 duration (order:lock:product:{id}): 5 s → 3 s',
      'changed src/reports.ts:11 refreshInterval (mutex:report:lock:tenant:{id}): 4 min → 2.4 s',
      'changed src/ttl.ts:4 ttlMs (payment:lock:order:{id}): 5 s → 16.1 s',
      'changed src/ttl.ts:7 PX (cart:lock:{uuid}): 10 s → 3 s',
      'changed src/ttl.ts:10 lockTimeout (mutex:report:lock:tenant:{id}): 5 min → 3 s',
    ]);
    expect(lines.filter((l) => l.startsWith('left alone ') || l.startsWith('skipped '))).toEqual(LEFT_ALONE);
    // The literal's characters only: separators kept, the unit kept, the comment untouched.
    expect(lineOf(join(copy, 'src/ttl.ts'), 4)).toBe('export const PAYMENT_LOCK_TTL_MS = 16_100;');
    expect(lineOf(join(copy, 'src/ttl.ts'), 10)).toBe('export const REPORT_LOCK_TTL_MS = 3 * 1000; // 5 minutes, to be safe');
    expect(lineOf(join(copy, 'src/reports.ts'), 11)).toBe('    refreshInterval: 2_400, // renew at 80 % of the lease');

    // The service still type-checks; the control: a file that misuses ttl-advisor's types is caught.
    const checked = typeErrorsOf(copy);
    expect(checked.errors).toEqual([]);
    const control = join(copy, 'src/zz-control.ts');
    writeFileSync(control, "import { SqliteRecorder } from 'ttl-advisor';\nexport const recorder = new SqliteRecorder({ path: 42 });\n");
    expect(typeErrorsOf(copy, checked.program).errors.join('\n')).toMatch(/zz-control\.ts: Type 'number' is not assignable to type 'string'/);
    rmSync(control);

    const again = await runCli(['apply', ...args], NOW);
    expect(again.code).toBe(0);
    expect(again.stdout.split('\n')[0]).toBe('no changes in the code; every TTL ttl-advisor may edit matches the data.');
    expect(again.stdout.split('\n').filter((l) => l.startsWith('left alone ') || l.startsWith('skipped '))).toEqual(LEFT_ALONE);
    expect(execFileSync('git', ['diff', '--stat'], { cwd: copy, encoding: 'utf8' })).toMatch(/4 files changed, 7 insertions\(\+\), 7 deletions\(-\)/);

    const check = await runCli(['check', ...args], NOW);
    expect(check.stdout.split('\n')[0]).toMatch(/^### ttl-advisor check --code: passes, with warnings ⚠️ — \d+ to look at$/);
    expect(check.code).toBe(0);
  }, 180_000);
});
