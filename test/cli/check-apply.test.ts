import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_PATTERNS, lognormal } from '../../fixtures/generate.js';
import { formatPolicy } from '../../src/policy/policy.js';
import { runCli } from '../helpers/cli.js';
import { buildDb } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
const demo = buildDb(dir, 'demo.db');
// The same traffic without the payment lock that expires: a database a good policy passes.
const calm = buildDb(dir, 'calm.db', {
  patterns: Object.fromEntries(Object.entries(DEMO_PATTERNS).filter(([p]) => !p.startsWith('payment') && !p.startsWith('<img'))),
});
let n = 0;
function policyFile(locks: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  const path = join(dir, `policy-${n++}.json`);
  writeFileSync(path, JSON.stringify({ locks, ...extra }, null, 2) + '\n');
  return path;
}

describe('ttl-advisor check', () => {
  it('fails (exit 1) when a lock expired or a TTL must rise, with the evidence as Markdown', async () => {
    const policy = policyFile({
      'payment:lock:order:{id}': { ttlMs: 5000 },
      'order:lock:product:{id}': { ttlMs: 5000 },
      'mail:lock:user:{id}': { ttlMs: 5000, pinned: true, reason: 'SMTP timeout is 4 s' },
      'legacy:lock:{id}': { ttlMs: 30000 },
    });
    const { code, stdout, stderr } = await runCli(['check', '--policy', policy, '--db', demo]);
    expect(stderr).toBe('');
    expect(code).toBe(1);
    expect(stdout).toMatchSnapshot();
  });

  it('passes (exit 0) when every configured TTL covers the data', async () => {
    const policy = policyFile({ 'order:lock:product:{id}': { ttlMs: 5000 }, 'cart:lock:{uuid}': { ttlMs: 3000 } });
    const { code, stdout } = await runCli(['check', '--policy', policy, '--db', calm]);
    expect(code).toBe(0);
    // The headline says what exit 0 says, and what it does not cover: patterns the policy leaves to the default.
    expect(stdout.split('\n')[0]).toMatch(/^### ttl-advisor check: passes, with warnings ⚠️ — \d+ to look at$/);
    expect(stdout).toMatch(/Not in the policy: runs with the default 10 s\./);
    const all = policyFile(Object.fromEntries(Object.keys(DEMO_PATTERNS).filter((p) => !p.startsWith('payment') && !p.startsWith('<img')).map((p) => [p, { ttlMs: 300_000, pinned: true }])));
    const covered = await runCli(['check', '--policy', all, '--db', calm]);
    expect(covered.stdout.split('\n')[0]).toMatch(/^### ttl-advisor check: (every configured TTL matches the data ✅|passes, with warnings ⚠️ — \d+ to look at)$/);
  });

  it('a too-long TTL fails only with --strict; few samples only with --fail-on-insufficient-data', async () => {
    const tooLong = policyFile({ 'report:lock:tenant:{id}': { ttlMs: 300_000 } });
    expect((await runCli(['check', '--policy', tooLong, '--db', calm])).code).toBe(0);
    expect((await runCli(['check', '--policy', tooLong, '--db', calm, '--strict'])).code).toBe(1);
    const few = policyFile({ 'mail:lock:user:{id}': { ttlMs: 3000 } });
    const lenient = await runCli(['check', '--policy', few, '--db', calm]);
    expect(lenient.code).toBe(0);
    expect(lenient.stdout).toMatch(/insufficient data/);
    expect((await runCli(['check', '--policy', few, '--db', calm, '--fail-on-insufficient-data'])).code).toBe(1);
  });

  it('--min-change hides small moves', async () => {
    // With a 1 s floor, order's recommendation is 3 × p99 ≈ 1.23 s rounded up to 1.3 s: a 1.15 s TTL is short of what the data needs.
    const policy = policyFile({ 'order:lock:product:{id}': { ttlMs: 1150 } });
    const short = await runCli(['check', '--policy', policy, '--db', calm, '--floor', '1000']);
    expect(short.code).toBe(1);
    expect(short.stdout).toMatch(/order:lock:product:\{id\}.*too short/);
    const hidden = await runCli(['check', '--policy', policy, '--db', calm, '--floor', '1000', '--min-change', '15']);
    expect(hidden.code).toBe(0);
    expect(hidden.stdout).not.toMatch(/order:lock:product/);
  });

  it('a TTL under the floor that covers the data is `below floor`: a warning, not a failure', async () => {
    // order's p99 is about 0.4 s, so 3 × p99 ≈ 1.2 s: a 2.5 s TTL covers it, though under the 3 s floor.
    const policy = policyFile({ 'order:lock:product:{id}': { ttlMs: 2500 } });
    const { code, stdout } = await runCli(['check', '--policy', policy, '--db', calm]);
    expect(code).toBe(0);
    expect(stdout.split('\n')[0]).toMatch(/^### ttl-advisor check: passes, with warnings ⚠️/);
    expect(stdout).toMatch(/\| `order:lock:product:\{id\}` \| 2\.5 s \| \*\*3 s\*\* \|.*🔵 below floor · `apply` writes 3 s \|$/m);
    expect(stdout).toMatch(/^- `order:lock:product:\{id\}`: The TTL of 2\.5 s covers the data but is under the 3 s floor\. Deploy pending: the locks ran with 5 s, the policy has 2\.5 s\.$/m);
    expect(stdout).not.toMatch(/fails the check/);
    // 2.9 s is within --min-change (10 %) of the floor: apply leaves it, and check does not ask for a look.
    const near = await runCli(['check', '--policy', policyFile({ 'order:lock:product:{id}': { ttlMs: 2900 } }), '--db', calm]);
    expect(near.stdout).not.toMatch(/^\| `order:lock:product/m);
  });

  it('--format json for machines', async () => {
    const policy = policyFile({ 'payment:lock:order:{id}': { ttlMs: 5000 } });
    const { code, stdout } = await runCli(['check', '--policy', policy, '--db', demo, '--format', 'json']);
    expect(code).toBe(1);
    const result = JSON.parse(stdout);
    expect(result.attention[0]).toMatchObject({ pattern: 'payment:lock:order:{id}', configuredTtlMs: 5000, verdict: 'expired', failing: true });
    expect(result.missingFromPolicy.map((p: { pattern: string }) => p.pattern)).toContain('order:lock:product:{id}');
    // Every row says whether it fails, missing patterns included.
    expect(result.missingFromPolicy.every((p: { failing: unknown }) => typeof p.failing === 'boolean')).toBe(true);
  });

  it('an invalid policy file: one clear line, exit 2', async () => {
    const policy = join(dir, 'broken.json');
    writeFileSync(policy, '{ "locks": { "a:{id}": { "ttlMs": -1 } } }');
    const { code, stdout, stderr } = await runCli(['check', '--policy', policy, '--db', demo]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toEqual([`ttl-advisor: ${policy}: entry "a:{id}": expected "ttlMs" to be a positive integer (ms), got -1`]);
  });
});

describe('ttl-advisor apply moves a TTL only on evidence, and says what it left out', () => {
  it('one hour of data changes nothing, line by line why; --min-window lowers the bar', async () => {
    // The daily peak's hour: enough samples, too short a window.
    const hour = buildDb(dir, 'one-hour.db', { hours: 1, startMs: Date.UTC(2026, 10, 28, 14) });
    const policy = policyFile({ 'order:lock:product:{id}': { ttlMs: 5000 } });
    const before = readFileSync(policy, 'utf8');
    const { code, stdout } = await runCli(['apply', '--policy', policy, '--db', hour]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/: no changes; \d+ recommendation\(s\) left out:\n/);
    expect(stdout).toMatch(/^skipped order:lock:product:\{id\} \(5 s → 3 s\): short window: \d+ min( \d+ s)? of data, --min-window is 24\.0 h$/m);
    expect(readFileSync(policy, 'utf8')).toBe(before);

    const lowered = await runCli(['apply', '--policy', policy, '--db', hour, '--min-window', '30m']);
    expect(lowered.stdout).toMatch(/^changed order:lock:product:\{id\}: 5 s → 3 s$/m);

    const bad = await runCli(['apply', '--policy', policy, '--db', hour, '--min-window', 'a while']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Expected --min-window to be a duration like 24h, 90m or 2d/);
  });

  it('pinned entries, small moves and thin data are each named with their reason', async () => {
    const policy = policyFile({
      'payment:lock:order:{id}': { ttlMs: 5000, pinned: true, reason: 'gateway timeout is 4 s' },
      'order:lock:product:{id}': { ttlMs: 3100 },
    });
    const { stdout } = await runCli(['apply', '--policy', policy, '--db', demo, '--dry-run']);
    expect(stdout).toMatch(/^skipped payment:lock:order:\{id\} \(5 s → [\d.]+ s\): pinned \(gateway timeout is 4 s\)$/m);
    expect(stdout).toMatch(/^skipped order:lock:product:\{id\} \(3\.1 s → 3 s\): under --min-change: 3\.2 % < 10 %$/m);
    expect(stdout).toMatch(/^skipped mail:lock:user:\{id\} \(not in the file\): too few samples: \d+ of 299 hold times$/m);
  });
});

describe('ttl-advisor check converges once the fix is merged', () => {
  const shortTtl = buildDb(dir, 'short-ttl.db', {
    patterns: { 'sync:lock:{id}': { key: (id: number) => `sync:lock:${id}`, perHour: 30, holdMs: lognormal(150, 0.5), ttlMs: 250 } },
  });

  it('expirations under the old 250 ms TTL no longer fail when the policy TTL covers every one of them', async () => {
    const raised = policyFile({ 'sync:lock:{id}': { ttlMs: 3000 } });
    const { code, stdout } = await runCli(['check', '--policy', raised, '--db', shortTtl]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^- `sync:lock:\{id\}`: [\d,]+ expiration\(s\) under the 250 ms in use are covered by the policy's TTL\. Deploy pending: the locks ran with 250 ms, the policy has 3 s\.$/m);
    expect(stdout).not.toMatch(/fails the check/);
    const json = JSON.parse((await runCli(['check', '--policy', raised, '--db', shortTtl, '--format', 'json'])).stdout);
    const row = [...json.attention, ...json.fine].find((r: { pattern: string }) => r.pattern === 'sync:lock:{id}');
    expect(row).toMatchObject({ expired: 0, inUseTtlMs: 250, configuredTtlMs: 3000 });
    expect(row.resolvedExpirations).toBeGreaterThan(0);
  });

  it('still fails while the policy TTL leaves some of those holds uncovered, or is the old one', async () => {
    for (const ttlMs of [250, 600]) {
      const policy = policyFile({ 'sync:lock:{id}': { ttlMs } });
      const { code, stdout } = await runCli(['check', '--policy', policy, '--db', shortTtl]);
      expect(code, `${ttlMs} ms`).toBe(1);
      expect(stdout).toMatch(/🔴 expired.*fails the check/);
    }
  });
});

describe('ttl-advisor check --format github', () => {
  it('annotates the policy file on each entry line, at most 10, errors first, and writes the summary for the job', async () => {
    const patterns = Object.fromEntries(
      Array.from({ length: 15 }, (_, i) => [`svc${String.fromCharCode(97 + i)}:lock:{id}`, { key: (id: number) => `svc${String.fromCharCode(97 + i)}:lock:${id}`, perHour: 20, holdMs: lognormal(200, 0.3), ttlMs: 100 }]),
    );
    const db = buildDb(dir, 'fifteen.db', { patterns });
    // One entry per line: entry i sits on line i + 3; all too short (100 ms against a p99 near 400 ms).
    const policy = policyFile(Object.fromEntries(Object.keys(patterns).map((p) => [p, { ttlMs: 100 }])));
    const text = formatPolicy({ locks: Object.fromEntries(Object.keys(patterns).map((p) => [p, { ttlMs: 100 }])) });
    writeFileSync(policy, text);
    const summaryFile = join(dir, 'step-summary.md');
    writeFileSync(summaryFile, '');
    process.env.GITHUB_STEP_SUMMARY = summaryFile;
    try {
      const { code, stdout } = await runCli(['check', '--policy', policy, '--db', db, '--format', 'github']);
      expect(code).toBe(1);
      const annotations = stdout.split('\n').filter((l) => l.startsWith('::'));
      expect(annotations).toHaveLength(10);
      const lines = text.split('\n');
      for (const a of annotations) {
        // The reason first, in words: the TTL, what the data recommends, the expirations it would save.
        const match = /^::error file=([^,]+),line=(\d+),title=(.+?)::[\d,]+ lock\(s\) expired while the critical section still ran \(TTL 100 ms in use\); the recommended [\d.]+ s covers them\. \(p99 [\d.]+ ms, [\d,]+ samples, [\d,]+ expired\)$/.exec(a)!;
        expect(match, a).not.toBeNull();
        expect(match[1]).toBe(policy);
        const pattern = match[3]!.replace(/%3A/g, ':').replace(/%2C/g, ',').replace(/: [a-z ]+$/, '');
        expect(lines[Number(match[2]) - 1]).toContain(`"${pattern}"`);
      }
      expect(stdout.trim().split('\n').at(-1)).toMatch(/^ttl-advisor check: fails ❌ — 15 failing$/);
      const summary = readFileSync(summaryFile, 'utf8');
      expect(summary).toMatch(/^### ttl-advisor check: fails ❌/);
      expect(summary).toMatch(/5 more finding\(s\) without an annotation of their own/);
    } finally {
      delete process.env.GITHUB_STEP_SUMMARY;
    }
  });
});

describe('evidence rules everywhere', () => {
  it('contention shows in check, the Markdown report and the terminal table, not only deep in the HTML', async () => {
    const policy = policyFile({ 'inventory:lock:global': { ttlMs: 3000 } });
    const check = await runCli(['check', '--policy', policy, '--db', calm]);
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(/^\| `inventory:lock:global` .*⚠️ contended \|$/m);
    expect(check.stdout).toMatch(/^- `inventory:lock:global`: Contended: wait p99 [\d.]+ ms, [\d.]+ % not acquired — the key is probably too broad/m);
    const out = join(dir, 'contended-report');
    const report = await runCli(['report', '--db', calm, '--out', out, '--format', 'md']);
    expect(report.stdout).toMatch(/^inventory:lock:global .* ok, contended$/m);
    expect(readFileSync(join(out, 'ttl-report.md'), 'utf8')).toMatch(/^\| `inventory:lock:global` .*🟢 ok · ⚠️ contended \|$/m);
  });

  it('a short window is said in check and in apply', async () => {
    const hour = buildDb(dir, 'short-window.db', { hours: 1, startMs: Date.UTC(2026, 10, 28, 14) });
    const policy = policyFile({ 'order:lock:product:{id}': { ttlMs: 5000 } });
    const check = await runCli(['check', '--policy', policy, '--db', hour]);
    expect(check.stdout).toMatch(/^> ⚠️ The samples span .*less than 24 h/m);
    const apply = await runCli(['apply', '--policy', policy, '--db', hour, '--dry-run']);
    expect(apply.stderr).toMatch(/^warning: The samples span .*less than 24 h/m);
  });
});

describe('ttl-advisor init', () => {
  it('writes the first policy file from the data, lists what it left out, and never overwrites one', async () => {
    const policy = join(dir, 'first-policy.json');
    const { code, stdout } = await runCli(['init', '--policy', policy, '--db', demo]);
    expect(code).toBe(0);
    const written = JSON.parse(readFileSync(policy, 'utf8'));
    expect(written.locks['payment:lock:order:{id}'].ttlMs).toBeGreaterThan(5000);
    expect(written.locks['order:lock:product:{id}']).toEqual({ ttlMs: 3000 });
    expect(written.locks['mail:lock:user:{id}']).toBeUndefined();
    expect(stdout).toMatch(/^wrote .*first-policy\.json: \d+ pattern\(s\)$/m);
    expect(stdout).toMatch(/^  mail:lock:user:\{id\} \(no recommendation yet\): too few samples: \d+ of 299 hold times$/m);
    // What init wrote, apply leaves as it is.
    expect((await runCli(['apply', '--policy', policy, '--db', demo])).stdout).not.toMatch(/^changed /m);

    const before = readFileSync(policy, 'utf8');
    const again = await runCli(['init', '--policy', policy, '--db', demo]);
    expect(again.code).toBe(2);
    expect(again.stderr.trim()).toBe(`ttl-advisor: ${policy} exists already; ttl-advisor apply updates it`);
    expect(readFileSync(policy, 'utf8')).toBe(before);
  });
});

describe('ttl-advisor apply', () => {
  it('writes the recommendations, keeps pinned entries and order, adds new patterns, and is idempotent', async () => {
    const policy = policyFile({
      'payment:lock:order:{id}': { ttlMs: 5000 },
      'mail:lock:user:{id}': { ttlMs: 5000, pinned: true, reason: 'SMTP timeout is 4 s' },
      'report:lock:tenant:{id}': { ttlMs: 300000, pinned: true },
      'order:lock:product:{id}': { ttlMs: 10000 },
    });
    const first = await runCli(['apply', '--policy', policy, '--db', demo]);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^--- /);
    expect(first.stdout).toMatch(/changed payment:lock:order:\{id\}: 5 s → 16\.3 s/);
    const written = JSON.parse(readFileSync(policy, 'utf8'));
    expect(Object.keys(written.locks).slice(0, 4)).toEqual([
      'payment:lock:order:{id}',
      'mail:lock:user:{id}',
      'report:lock:tenant:{id}',
      'order:lock:product:{id}',
    ]);
    expect(written.locks['payment:lock:order:{id}']).toEqual({ ttlMs: 16300 });
    expect(written.locks['mail:lock:user:{id}']).toEqual({ ttlMs: 5000, pinned: true, reason: 'SMTP timeout is 4 s' });
    expect(written.locks['report:lock:tenant:{id}']).toEqual({ ttlMs: 300000, pinned: true });
    expect(written.locks['order:lock:product:{id}']).toEqual({ ttlMs: 3000 });
    // Patterns with enough data are added; too few samples (mail has a pinned entry anyway, the pipe key has 49) are not.
    expect(written.locks['cart:lock:{uuid}']).toEqual({ ttlMs: 3000 });
    expect(Object.keys(written.locks).some((p) => p.startsWith('lock|'))).toBe(false);

    const before = readFileSync(policy, 'utf8');
    const second = await runCli(['apply', '--policy', policy, '--db', demo]);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/no changes/);
    expect(readFileSync(policy, 'utf8')).toBe(before);
  });

  it('a later change is a one-line diff', async () => {
    const policy = join(dir, 'canonical.json');
    writeFileSync(policy, formatPolicy({ locks: { 'order:lock:product:{id}': { ttlMs: 3000 }, 'payment:lock:order:{id}': { ttlMs: 9000 } } }));
    const { stdout } = await runCli(['apply', '--policy', policy, '--db', demo, '--pattern', 'payment:*', '--dry-run']);
    expect(stdout.split('\n').filter((l) => /^[-+] /.test(l))).toEqual([
      '-    "payment:lock:order:{id}": { "ttlMs": 9000 }',
      '+    "payment:lock:order:{id}": { "ttlMs": 16300 }',
    ]);
  });

  it('--dry-run prints the diff and writes nothing', async () => {
    const policy = policyFile({ 'payment:lock:order:{id}': { ttlMs: 5000 } });
    const before = readFileSync(policy, 'utf8');
    const { code, stdout } = await runCli(['apply', '--policy', policy, '--db', demo, '--dry-run']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/\(dry run: nothing written\)/);
    expect(readFileSync(policy, 'utf8')).toBe(before);
  });

  it('an invalid policy file is reported (exit 2) and left exactly as it was', async () => {
    const policy = join(dir, 'invalid.json');
    const text = '{ "locks": { "order:lock:product:{id}": { "ttlMs": 10000, "pinnned": true } } }\n';
    writeFileSync(policy, text);
    const { code, stderr } = await runCli(['apply', '--policy', policy, '--db', demo]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown field "pinnned"/);
    expect(readFileSync(policy, 'utf8')).toBe(text);
  });
});

describe('apply writes only what its own loader accepts', () => {
  it('refuses steps, floors and multipliers that would make TTLs no lock takes, and leaves the file as it was', async () => {
    const dir2 = tempDir();
    const db = buildDb(dir2, 'apply-bounds.db');
    const policy = join(dir2, 'ttl-advisor.json');
    const before = formatPolicy({ locks: { 'order:lock:product:{id}': { ttlMs: 1000 } } });
    writeFileSync(policy, before);
    for (const [flag, value, message] of [
      ['--step', '0.3', /Expected --step to be a whole number of milliseconds ≥ 1/],
      ['--floor', '2.5', /Expected --floor to be a whole number of milliseconds ≥ 0/],
      ['--multiplier', '1e13', /Expected `multiplier` to be at most 1000, got `10000000000000`/],
    ] as const) {
      const { code, stderr } = await runCli(['apply', '--db', db, '--policy', policy, flag, value]);
      expect(code, stderr).toBe(2);
      expect(stderr).toMatch(message);
      expect(readFileSync(policy, 'utf8')).toBe(before);
    }
    // And what it writes loads again: every TTL a whole number of milliseconds.
    const { code } = await runCli(['apply', '--db', db, '--policy', policy, '--step', '7']);
    expect(code).toBe(0);
    const written = JSON.parse(readFileSync(policy, 'utf8')) as { locks: Record<string, { ttlMs: number }> };
    for (const entry of Object.values(written.locks)) expect(Number.isInteger(entry.ttlMs) && entry.ttlMs % 7 === 0).toBe(true);
  });
});

describe('apply respects the policy file it rewrites', () => {
  async function applyTo(policyPath: string, db: string) {
    return runCli(['apply', '--db', db, '--policy', policyPath]);
  }

  it('keeps its mode, writes through a symlink, and refuses a read-only file', async () => {
    const { chmodSync, lstatSync, mkdirSync, statSync, symlinkSync } = await import('node:fs');
    const dir3 = tempDir();
    const db = buildDb(dir3, 'modes.db');
    const body = formatPolicy({ locks: { 'order:lock:product:{id}': { ttlMs: 1000 } } });

    const secret = join(dir3, 'secret.json');
    writeFileSync(secret, body);
    chmodSync(secret, 0o600);
    expect((await applyTo(secret, db)).code).toBe(0);
    expect(readFileSync(secret, 'utf8')).not.toBe(body);
    expect(statSync(secret).mode & 0o777).toBe(0o600);

    mkdirSync(join(dir3, 'shared'));
    const real = join(dir3, 'shared', 'ttl-advisor.json');
    writeFileSync(real, body);
    const link = join(dir3, 'link.json');
    symlinkSync(real, link);
    expect((await applyTo(link, db)).code).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, 'utf8')).not.toBe(body);

    const readOnly = join(dir3, 'read-only.json');
    writeFileSync(readOnly, body);
    chmodSync(readOnly, 0o444);
    const refused = await applyTo(readOnly, db);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/read-only\.json is read-only; left unchanged/);
    expect(readFileSync(readOnly, 'utf8')).toBe(body);
  });
});
