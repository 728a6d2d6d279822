import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generateDatabase, lognormal, type PatternSpec } from '../../fixtures/generate.js';
import { log, median, round } from './stats.js';

const run = promisify(execFile);
const child = fileURLToPath(new URL('./report-child.ts', import.meta.url));

/** 50 kinds of lock with different speeds, TTLs and key shapes. */
function fiftyPatterns(samples: number): Record<string, PatternSpec> {
  const perHour = samples / 48 / 50;
  const specs: Record<string, PatternSpec> = {};
  for (let i = 0; i < 50; i++) {
    const medianMs = 2 * 1.15 ** i; // 2 ms … 1.9 s
    specs[`svc${i}:lock:entity:{id}`] = {
      key: (id) => `svc${i}:lock:entity:${id}`,
      perHour,
      holdMs: lognormal(medianMs, 0.3 + (i % 5) * 0.1),
      ttlMs: [3000, 5000, 10_000, 30_000][i % 4]!,
    };
  }
  return specs;
}

/** Builds (once, cached in the temp folder) a database of `samples` samples over 50 patterns and 48 h. */
function benchDatabase(samples: number): string {
  const dir = join(tmpdir(), 'ttl-advisor-bench-cache');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `report-${samples}-v1.db`);
  if (!existsSync(path)) {
    const started = performance.now();
    log(`  building ${samples.toLocaleString('en-US')} samples into ${path} (cached for later runs)…`);
    generateDatabase({ path, patterns: fiftyPatterns(samples), seed: 11 });
    log(`  built in ${round((performance.now() - started) / 1000, 1)} s, ${round(statSync(path).size / 2 ** 20, 0)} MiB`);
  }
  return path;
}

function scanMs(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    const started = performance.now();
    db.prepare('SELECT sum(hold_us) AS s FROM samples').get();
    return performance.now() - started;
  } finally {
    db.close();
  }
}

async function reportRun(path: string, format: string, out: string): Promise<{ ms: number; maxRssMb: number; processMs: number }> {
  const started = performance.now();
  const { stdout } = await run(process.execPath, ['--import', 'tsx', child, '--db', path, '--format', format, '--out', out, '--quiet'], {
    maxBuffer: 1 << 20,
  });
  const processMs = performance.now() - started;
  const result = JSON.parse(stdout.trim().split('\n').pop()!) as { code: number; ms: number; maxRssMb: number };
  if (result.code !== 0) throw new Error(`report exited ${result.code}`);
  return { ms: result.ms, maxRssMb: result.maxRssMb, processMs };
}

/**
 * `report --format json` against one full scan of the raw rows, at 1 M and
 * 10 M samples, interleaved; plus the HTML report's time for 50 patterns.
 */
export async function benchReport(outDir: string, { sizes = [1_000_000, 10_000_000], repeats = 3 } = {}) {
  const results = [];
  for (const samples of sizes) {
    const path = benchDatabase(samples);
    scanMs(path); // warm the page cache, for both alike
    const scans: number[] = [];
    const reports: number[] = [];
    const processes: number[] = [];
    const rss: number[] = [];
    for (let r = 0; r < repeats; r++) {
      scans.push(scanMs(path));
      const report = await reportRun(path, 'json', outDir);
      reports.push(report.ms);
      processes.push(report.processMs);
      rss.push(report.maxRssMb);
    }
    const result = {
      samples,
      dbMiB: round(statSync(path).size / 2 ** 20, 0),
      fullScanMs: round(median(scans), 1),
      reportJsonMs: round(median(reports), 1),
      reportProcessMs: round(median(processes), 1),
      ratioReportToScan: round(median(reports) / median(scans)),
      peakRssMb: round(Math.max(...rss), 1),
      targets: { ratioReportToScan: '≤ 2', peakRssMb: '≤ 300' },
    };
    log(
      `report  ${samples.toLocaleString('en-US').padStart(10)} samples: full scan ${result.fullScanMs} ms, report --format json ${result.reportJsonMs} ms in-process (${result.reportProcessMs} ms with process start) → ratio ${result.ratioReportToScan} (target ≤ 2); peak RSS ${result.peakRssMb} MB (target ≤ 300)`,
    );
    results.push(result);
  }
  const largest = benchDatabase(sizes.at(-1)!);
  const html: number[] = [];
  let htmlRss = 0;
  for (let r = 0; r < repeats; r++) {
    const report = await reportRun(largest, 'html', outDir);
    html.push(report.ms);
    htmlRss = Math.max(htmlRss, report.maxRssMb);
  }
  const htmlResult = { patterns: 50, reportHtmlMs: round(median(html), 1), peakRssMb: round(htmlRss, 1) };
  log(`report  HTML for 50 patterns: ${htmlResult.reportHtmlMs} ms, peak RSS ${htmlResult.peakRssMb} MB`);
  return { sizes: results, html: htmlResult };
}
