import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/store/format.js';
import { DEMO_START_MS } from '../../fixtures/generate.js';
import { built } from '../helpers/built.js';
import { runCli } from '../helpers/cli.js';
import { buildDb } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
const demo = buildDb(dir, 'demo.db');
let outs = 0;
const outDir = () => join(dir, `out-${outs++}`);

describe('ttl-advisor report', () => {
  it('writes HTML, Markdown and JSON and prints a compact table, worst first', async () => {
    const out = outDir();
    const { code, stdout, stderr } = await runCli(['report', '--db', demo, '--out', out]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['ttl-report.html', 'ttl-report.json', 'ttl-report.md']);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^pattern\s+samples\s+p99\s+current TTL\s+recommended\s+verdict$/);
    expect(lines[2]).toMatch(/^payment:lock:order:\{id\}\s+[\d,]+\s+[\d.]+ s\s+5 s\s+[\d.]+ s\s+expired$/);
    expect(stdout).toContain(`wrote ${join(out, 'ttl-report.html')}`);
  });

  it('writes the JSON report in its documented, stable shape', async () => {
    const out = outDir();
    await runCli(['report', '--db', demo, '--out', out, '--format', 'json'], DEMO_START_MS + 2 * 86_400_000);
    expect(readdirSync(out)).toEqual(['ttl-report.json']);
    const report = JSON.parse(readFileSync(join(out, 'ttl-report.json'), 'utf8'));
    expect(report).toMatchObject({
      version: 2,
      generatedAt: '2026-11-30T00:00:00.000Z',
      window: { from: expect.stringMatching(/^2026-11-28T00:0/), to: expect.stringMatching(/^2026-11-29T23:5/) },
      policy: { multiplier: 3, floorMs: 3000, stepMs: 100, cover: 'p99' },
    });
    // Hold figures say whether they are lower bounds; the recommendation whether it is advice.
    expect(report.patterns[0]).toMatchObject({ p99IsLowerBound: false, censored: 0, recommendation: { advice: true, atLeast: false } });
    const payment = report.patterns.find((p: { pattern: string }) => p.pattern === 'payment:lock:order:{id}');
    expect(Object.keys(payment)).toEqual(
      expect.arrayContaining(['pattern', 'count', 'p50Ms', 'p90Ms', 'p99Ms', 'p999Ms', 'maxMs', 'currentTtlMs', 'recommendedTtlMs', 'verdict', 'outcomes']),
    );
    expect(payment.verdict).toBe('expired');
    // Fields may be added (lost came with schema 5); none are renamed or removed.
    expect(Object.keys(payment.outcomes)).toEqual(['released', 'expired', 'not_acquired', 'error', 'lost']);
  });

  it('writes a Markdown table short enough to paste into a PR', async () => {
    const out = outDir();
    await runCli(['report', '--db', demo, '--out', out, '--format', 'md']);
    const md = readFileSync(join(out, 'ttl-report.md'), 'utf8');
    const lines = md.split('\n');
    expect(lines).toContain('| pattern | samples | p99 | current TTL | recommended TTL | verdict |');
    expect(md).toMatch(/TTL = max\(3 s, 3 × p99\), rounded up to 100 ms/);
    expect(md).toMatch(/^\| `payment:lock:order:\{id\}` \| [\d,]+ \| [\d.]+ s \| 5 s \| \*\*[\d.]+ s\*\* \| 🔴 [\d,]+ expired \|$/m);
    // The hostile pattern cannot break the table: its pipe is escaped and its newline made visible.
    expect(md).toContain('| ``lock\\|`pipe`:\\u{a}{id}`` |');
    const tableRows = lines.filter((l) => l.startsWith('| '));
    for (const row of tableRows) expect(row.split(/(?<!\\)\|/).length).toBe(8);
    // Under the table, the trade for each pattern whose TTL should change, in numbers.
    expect(md).toMatch(
      /^- `payment:lock:order:\{id\}`: At the TTL in use \(5 s\), [\d,]+ holds outlived it \([\d.,]+ a day\) and [\d,]+ used more than half of it \([\d.,]+ a day\); it is 0\.\d\d× the p99 and 0\.\d\d× the longest hold\. At the recommended [\d.]+ s, .*\. If a holder crashes while holding, every other instance waits 5 s now, [\d.]+ s as recommended\.$/m,
    );
    // And why a row has no recommendation, or is contended: the table shows the state, this the numbers behind it.
    expect(md).toMatch(/^- `mail:lock:user:\{id\}`: [\d,]+ of 299 hold times: too few for a p99 at 95 % confidence, no recommendation yet\.$/m);
    expect(md).toMatch(/^- `inventory:lock:global`: Contended: wait p99 [\d.]+ m?s, [\d.]+ % not acquired/m);
    expect(lines.length).toBeLessThan(40);
  });

  it('applies --multiplier, --floor, --step, --since, --until and --pattern', async () => {
    const out = outDir();
    const { code } = await runCli([
      'report', '--db', demo, '--out', out, '--format', 'json', '--multiplier', '2', '--floor', '1000', '--step', '250',
      '--since', '2026-11-29T00:00Z', '--until', '2026-11-29T12:00Z', '--pattern', 'order:*',
    ]);
    expect(code).toBe(0);
    const report = JSON.parse(readFileSync(join(out, 'ttl-report.json'), 'utf8'));
    expect(report.policy).toEqual({ multiplier: 2, floorMs: 1000, stepMs: 250, cover: 'p99' });
    expect(report.patterns).toHaveLength(1);
    const [p] = report.patterns;
    expect(p.recommendedTtlMs).toBe(Math.max(1000, Math.ceil((2 * p.p99Ms) / 250) * 250));
    expect(p.firstAt >= '2026-11-29T00:00').toBe(true);
    expect(p.lastAt < '2026-11-29T12:00').toBe(true);
    expect(report.warnings.join(' ')).toMatch(/less than 24 h/);
  });

  it('reads several databases, repeated or by glob', async () => {
    const a = buildDb(dir, 'fleet-a.db', { seed: 1, hours: 6 });
    const b = buildDb(dir, 'fleet-b.db', { seed: 2, hours: 6 });
    const out1 = outDir();
    const out2 = outDir();
    await runCli(['report', '--db', a, '--db', b, '--out', out1, '--format', 'json']);
    await runCli(['report', '--db', join(dir, 'fleet-*.db'), '--out', out2, '--format', 'json']);
    const r1 = JSON.parse(readFileSync(join(out1, 'ttl-report.json'), 'utf8'));
    const r2 = JSON.parse(readFileSync(join(out2, 'ttl-report.json'), 'utf8'));
    // Reports travel into pull requests: no local directories in them.
    expect(r1.sources).toEqual([basename(a), basename(b)]);
    expect(r2.sources).toEqual(r1.sources);
    expect(r2.patterns).toEqual(r1.patterns);
  });

  it('an empty database: a report that says there is nothing yet, exit 0', async () => {
    const empty = buildDb(dir, 'empty.db', { hours: 0 });
    const out = outDir();
    const { code, stderr } = await runCli(['report', '--db', empty, '--out', out]);
    expect(code).toBe(0);
    expect(stderr).toMatch(/warning: No samples yet: wrap your locks with a recorder/);
    expect(readFileSync(join(out, 'ttl-report.html'), 'utf8')).toMatch(/No samples in this window yet/);
  });

  it('reading leaves nothing beside the database: no -wal or -shm file, and its bytes as they were', async () => {
    const copy = join(dir, 'quiet.db');
    copyFileSync(demo, copy);
    const before = readFileSync(copy);
    for (const args of [['report', '--db', copy, '--out', outDir()], ['stats', '--db', copy], ['report', '--db', copy, '--since', '2030-01-01']]) {
      await runCli(args);
      expect(existsSync(`${copy}-wal`), args.join(' ')).toBe(false);
      expect(existsSync(`${copy}-shm`), args.join(' ')).toBe(false);
    }
    expect(readFileSync(copy).equals(before)).toBe(true);
  });

  it('a directory as --db, or --out naming a file: one clear line, exit 2', async () => {
    const folder = join(dir, 'a-folder');
    mkdirSync(folder, { recursive: true });
    const asDb = await runCli(['report', '--db', folder, '--out', outDir()]);
    expect(asDb.code).toBe(2);
    expect(asDb.stderr.trim()).toBe(`ttl-advisor: ${folder} is a directory, not a samples database`);
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    const asOut = await runCli(['report', '--db', demo, '--out', file]);
    expect(asOut.code).toBe(2);
    expect(asOut.stderr.trim()).toBe(`ttl-advisor: Cannot write reports into ${file}: it (or a folder on its way) is a file, not a directory`);
    expect(readFileSync(file, 'utf8')).toBe('x');
  });

  it('a window that misses the data leaves the earlier reports as they were', async () => {
    const out = outDir();
    expect((await runCli(['report', '--db', demo, '--out', out])).code).toBe(0);
    const before = readFileSync(join(out, 'ttl-report.html'), 'utf8');
    const { code, stderr } = await runCli(['report', '--db', demo, '--out', out, '--since', '2030-01-01']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/the database holds/);
    expect(readFileSync(join(out, 'ttl-report.html'), 'utf8')).toBe(before);
  });

  describe('bad input: one clear line on stderr, exit 2, nothing written', () => {
    const notSqlite = join(dir, 'notes.db');
    writeFileSync(notSqlite, 'not a database\n'.repeat(100));
    const newer = join(dir, 'newer.db');
    const db = new Database(newer);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();

    it.each([
      ['a missing file', ['--db', join(dir, 'missing.db')], /No samples database at .*missing\.db/],
      ['a file that is not SQLite', ['--db', notSqlite], /notes\.db/],
      ['a newer schema', ['--db', newer], /schema version \d+, newer than this ttl-advisor/],
      ['--multiplier 0', ['--db', demo, '--multiplier', '0'], /--multiplier.*Expected --multiplier to be a number > 0/],
      ['--floor -5', ['--db', demo, '--floor', '-5'], /Expected --floor to be a whole number of milliseconds ≥ 0/],
      ['--since yesterdayish', ['--db', demo, '--since', 'yesterdayish'], /Expected `--since` to be an ISO date\/time.*got `yesterdayish`/],
      ['--since after --until', ['--db', demo, '--since', '2026-11-29', '--until', '2026-11-28'], /to be before `until`/],
      ['an unknown format', ['--db', demo, '--format', 'pdf'], /Expected a comma-separated list of html, md, json/],
      ['an unknown flag', ['--db', demo, '--bogus'], /unknown option '--bogus'/],
      ['a glob matching nothing', ['--db', join(dir, 'nothing-*.db')], /No samples database matches/],
      ['a window with no samples', ['--db', demo, '--since', '2030-01-01'], /No samples in the window and patterns asked for: the database holds [\d,]+ samples from \d{4}-.* UTC to \d{4}-.* UTC/],
      ['a pattern matching nothing', ['--db', demo, '--pattern', 'nothing:*'], /No samples in the window and patterns asked for: the database holds [\d,]+ samples/],
    ])('%s', async (_name, args, message) => {
      const out = outDir();
      const { code, stdout, stderr } = await runCli(['report', ...args, '--out', out]);
      expect(code).toBe(2);
      expect(stderr).toMatch(message);
      expect(stderr.trim().split('\n')).toHaveLength(1);
      expect(stderr).not.toMatch(/\n\s+at /);
      expect(stdout).toBe('');
      expect(existsSync(out)).toBe(false);
    });

    it('leaves an earlier report in place when a run fails', async () => {
      const out = outDir();
      await runCli(['report', '--db', demo, '--out', out, '--format', 'md']);
      const before = readFileSync(join(out, 'ttl-report.md'), 'utf8');
      const { code } = await runCli(['report', '--db', notSqlite, '--out', out, '--format', 'md']);
      expect(code).toBe(2);
      expect(readFileSync(join(out, 'ttl-report.md'), 'utf8')).toBe(before);
      expect(readdirSync(out)).toEqual(['ttl-report.md']);
    });
  });

  it('the built binary runs: --version, --help, and exit 2 on a usage error', async () => {
    const run = promisify(execFile);
    const bin = built('src/cli/main.ts');
    const version = await run(process.execPath, [bin, '--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const help = await run(process.execPath, [bin, 'report', '--help']);
    expect(help.stdout).toMatch(/--multiplier <n>/);
    const failed = await run(process.execPath, [bin, 'report', '--db', join(dir, 'missing.db')]).catch((e: { code: number; stderr: string }) => e);
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr.trim().split('\n')).toHaveLength(1);
  });
});
