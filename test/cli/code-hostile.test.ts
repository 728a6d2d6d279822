import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_START_MS, DEMO_STORIES } from '../../fixtures/generate.js';
import { runMeasuredCli } from '../helpers/child.js';
import { runCli } from '../helpers/cli.js';
import { buildDb } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Issue 47, K1–K6: what a repository's files can do to `check --code` and `apply --code`. Each test is
 * named after the defect it reproduced; each failed before its fix. The demo data says the payment lock's
 * 5 s must rise to 16.1 s and the order lock's 5 s may fall to 3 s.
 */

const NOW = DEMO_START_MS + 48 * 3_600_000;
const dir = realpathSync(tempDir('ttl-advisor-hostile-'));
const demo = buildDb(dir, 'demo.db', { patterns: DEMO_STORIES });
const NO_POLICY = join(dir, 'no-policy.json');
let repos = 0;

const PAY = (ttl = '5000') => `import { withLock } from 'ttl-advisor';\n\nexport async function pay(redis: any, id: number): Promise<void> {\n  await withLock(redis, \`payment:lock:order:\${id}\`, async () => {}, { ttlMs: ${ttl} });\n}\n`;
const ORDER = `import { withLock } from 'ttl-advisor';\n\nexport async function reserve(redis: any, id: number): Promise<void> {\n  await withLock(redis, \`order:lock:product:\${id}\`, async () => {}, { ttlMs: 5000 });\n}\n`;

/** A git repository holding `files` (path → text or bytes), committed. */
function repo(files: Record<string, string | Buffer>): string {
  const root = join(dir, `repo-${repos++}`);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  git(root, 'init', '-q');
  git(root, 'add', '.');
  git(root, 'commit', '-q', '-m', 'service');
  return root;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'core.quotePath=false', ...args], { cwd, encoding: 'utf8', stdio: 'pipe' });
}

const codeArgs = (root: string) => ['--code', join(root, 'src'), '--policy', NO_POLICY, '--db', demo];

describe('apply --code and check --code against hostile repositories', () => {
  it('K1: a 20,000-line file with two edits costs about the size of the change, not the square of the file (its diff: two hunks)', async () => {
    const filler = Array.from({ length: 20_000 }, (_, i) => `export const line${i} = ${i};`).join('\n');
    const root = repo({ 'src/pay.ts': `${PAY()}${filler}\n${ORDER.replace('reserve', 'reserveLast').replace("import { withLock } from 'ttl-advisor';\n\n", '')}` });
    const run = await runMeasuredCli(['apply', ...codeArgs(root), '--dry-run'], { cwd: root });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.match(/^@@ /gm)).toHaveLength(2);
    expect(run.stdout).toMatch(/^-  await withLock\(redis, `payment:lock:order:\$\{id\}`, async \(\) => \{\}, \{ ttlMs: 5000 \}\);\n\+  .*ttlMs: 16100/m);
    // The whole table of line pairs held 1.66 GB for such a file; the CLI itself takes about 100 MB.
    expect(run.maxRssMiB).toBeLessThan(400);
  }, 180_000);

  it('K2: a tracked symlink to a file outside the repository is never written through: one line, exit 2, the outside file unchanged', async () => {
    const outside = join(dir, 'outside-pay.ts');
    writeFileSync(outside, PAY());
    const root = repo({ 'src/orders.ts': ORDER });
    symlinkSync(outside, join(root, 'src/pay.ts'));
    git(root, 'add', '.');
    git(root, 'commit', '-q', '-m', 'link');
    // `--code` alone: the files git tracks, the link among them.
    const cwd = process.cwd();
    process.chdir(root);
    let result: Awaited<ReturnType<typeof runCli>>;
    try {
      result = await runCli(['apply', '--code', '--policy', NO_POLICY, '--db', demo], NOW);
    } finally {
      process.chdir(cwd);
    }
    const { code, stdout, stderr } = result;
    expect(code, stdout).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/src\/pay\.ts resolves to .*outside-pay\.ts, outside the repository .*: apply --code writes nothing outside it; nothing was written/);
    expect(readFileSync(outside, 'utf8')).toBe(PAY());
    expect(readFileSync(join(root, 'src/orders.ts'), 'utf8')).toBe(ORDER);
  });

  it('K2 (control): a symlink inside the repository is written through to its target, and the diff names the target', async () => {
    const root = repo({ 'src/real/pay.ts': PAY(), 'src/orders.ts': ORDER });
    symlinkSync('real/pay.ts', join(root, 'src/pay.ts'));
    const { code, stdout } = await runCli(['apply', '--code', join(root, 'src/pay.ts'), '--policy', NO_POLICY, '--db', demo], NOW);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^--- a\/src\/real\/pay\.ts$/m);
    expect(readFileSync(join(root, 'src/real/pay.ts'), 'utf8')).toBe(PAY('16100'));
  });

  it('K4: a second file that cannot be written stops the edit before the first is written: all or nothing', async () => {
    const root = repo({ 'src/a-pay.ts': PAY(), 'src/b-orders.ts': ORDER });
    chmodSync(join(root, 'src/b-orders.ts'), 0o444);
    const { code, stderr } = await runCli(['apply', ...codeArgs(root)], NOW);
    expect(code).toBe(2);
    expect(stderr).toMatch(/src\/b-orders\.ts cannot be written \(read-only, or its folder is\); nothing was written/);
    expect(readFileSync(join(root, 'src/a-pay.ts'), 'utf8')).toBe(PAY());
    expect(git(root, 'status', '--porcelain')).toBe('');
  });

  it('K5: file names holding a newline or ESC are quoted in the diff as git quotes them (git apply takes it) and reach no terminal or annotation raw', async () => {
    const root = repo({ 'src/pay\nment.ts': PAY(), 'src/\u001b[31mred.ts': ORDER });
    const dry = await runCli(['apply', ...codeArgs(root), '--dry-run'], NOW);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('--- "a/src/pay\\nment.ts"\n+++ "b/src/pay\\nment.ts"\n');
    expect(dry.stdout).toContain('--- "a/src/\\033[31mred.ts"\n');
    const patch = dry.stdout.slice(0, dry.stdout.indexOf('\nchanged ') + 1);
    writeFileSync(join(dir, 'k5.patch'), patch);
    git(root, 'apply', '--check', join(dir, 'k5.patch'));
    const github = await runCli(['check', ...codeArgs(root), '--format', 'github'], NOW);
    for (const out of [dry.stdout, dry.stderr, github.stdout]) expect(out).not.toMatch(/\u001b/);
    // No line forged: every line that starts a diff header is one of the two headers of each file.
    expect(dry.stdout.split('\n').filter((l) => l.startsWith('--- ') || l.startsWith('+++ '))).toHaveLength(4);
    expect(github.stdout).toMatch(/::error file=src\/pay\\u\{a\}ment\.ts,line=4/);
  });

  it('K6: a file with a UTF-8 BOM is edited and keeps its BOM; a UTF-16 file is refused for what it is', async () => {
    const bom = repo({ 'src/pay.ts': Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(PAY())]) });
    const { code, stdout, stderr } = await runCli(['apply', ...codeArgs(bom)], NOW);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^changed src\/pay\.ts:4 ttlMs/m);
    const written = readFileSync(join(bom, 'src/pay.ts'));
    expect([...written.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(written.subarray(3).toString('utf8')).toBe(PAY('16100'));

    const utf16 = repo({ 'src/pay.ts': Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(PAY(), 'utf16le')]) });
    const refused = await runCli(['apply', ...codeArgs(utf16)], NOW);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/src\/pay\.ts is UTF-16 text: apply --code edits UTF-8 files only/);
    expect(refused.stderr).not.toMatch(/changed while it was read/);
  });

  it('K3: a file too deep for the compiler (a 2,500-term + chain, 50,000 nested parentheses) is skipped and named; the rest is checked', async () => {
    const chain = `export const key = ${Array.from({ length: 2500 }, (_, i) => `'p${i}'`).join(' + ')};\n`;
    const parens = `export const x = ${'('.repeat(50_000)}1${')'.repeat(50_000)};\n`;
    const root = repo({ 'src/pay.ts': PAY(), 'src/generated/chain.ts': chain, 'src/generated/parens.ts': parens });
    const { code, stdout, stderr } = await runCli(['check', ...codeArgs(root)], NOW);
    expect(stderr).toBe('');
    // The payment lock must rise: the check still fails on it.
    expect(code).toBe(1);
    expect(stdout).toMatch(/^### ttl-advisor check --code: fails ❌ — 1 failing, \d+ to look at/);
    expect(stdout).toMatch(/\*\*Files not read\*\* \(any lock in them is not checked\):/);
    expect(stdout).toMatch(/^- `src\/generated\/chain\.ts`: nested more than 1000 levels deep \(generated code\?\): not read\.$/m);
    expect(stdout).toMatch(/^- `src\/generated\/parens\.ts`: nested (more than 1000 levels deep|too deep for the TypeScript parser) \(generated code\?\): not read\.$/m);
    const json = JSON.parse((await runCli(['check', ...codeArgs(root), '--format', 'json'], NOW)).stdout) as { skipped: { file: string }[] };
    expect(json.skipped.map((s) => s.file)).toEqual(['src/generated/chain.ts', 'src/generated/parens.ts']);
  });
});
