import { createServer, request, type Server } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SqliteRecorder, withLock } from '../../src/index.js';
import { startMetricsEndpoint, type MetricsEndpoint } from '../../src/metrics/endpoint.js';
import { runCli } from '../helpers/cli.js';
import { startPrometheus, type PrometheusServer } from '../helpers/prometheus-server.js';
import { freePort } from '../helpers/redis-server.js';
import { tempDir } from '../helpers/temp.js';

/**
 * `report`, `check`, `apply` with `--prometheus`: the same locks recorded to a samples database and,
 * through the OpenTelemetry SDK's Prometheus exporter, to a real Prometheus (Debian's 2.42) that
 * scrapes every second. Counts must be equal, each p99 in the bucket that holds the database's, the
 * verdicts the same.
 */

const dir = tempDir();
const TOKEN = 's3cret-token-7f1d9a';
// Patterns, TTLs and hold times chosen so that the verdicts do not sit on a bucket's edge:
// order: p99 ≈ 25 ms under a 4 s TTL (ok); stock: p99 ≈ 100 ms under 250 ms (too short: 3 × p99 > 250 ms in
// either figure); cart: 120 holds (too few for a p99 claim).
const PLAN = [
  { prefix: 'order:lock:product', n: 330, ttlMs: 4000, holdMs: (i: number) => 5 + (i % 20) },
  { prefix: 'stock:lock:sku', n: 310, ttlMs: 250, holdMs: (i: number) => 60 + (i % 40) },
  { prefix: 'cart:lock:user', n: 120, ttlMs: 30_000, holdMs: (i: number) => i % 5 },
] as const;
const TOTAL = PLAN.reduce((n, p) => n + p.n, 0);

interface TeamHistogram {
  record(valueS: number, attributes: Record<string, string>): void;
}

describe('--prometheus: the analysis from Prometheus', () => {
  let redis: Redis;
  let endpoint: MetricsEndpoint;
  let team: { close(): Promise<void>; histogram: TeamHistogram; url: string };
  let prometheus: PrometheusServer;
  let proxy: Server;
  let proxyUrl: string;
  const db = join(dir, 'samples.db');

  beforeAll(async () => {
    redis = new Redis(inject('redisUrl'));
    endpoint = await startMetricsEndpoint({ port: await freePort(), host: '127.0.0.1', source: 'withLock' });
    team = await startTeamHistogram(await freePort());
    const sqlite = new SqliteRecorder({ path: db });
    const recorder = [sqlite, endpoint.recorder];
    const run = (Date.now() % 1_000_000) * 1000;
    for (const { prefix, n, ttlMs, holdMs } of PLAN) {
      // Batches of distinct keys: no lock waits for another, and the machine's load does not stretch the holds much.
      for (let start = 0; start < n; start += 30) {
        const batch = Array.from({ length: Math.min(30, n - start) }, (_, k) => start + k);
        await Promise.all(batch.map((i) => withLock(redis, `${prefix}:${run + i}`, () => new Promise((r) => setTimeout(r, holdMs(i))), { ttlMs, recorder })));
      }
    }
    await sqlite.close();
    // A team's own histogram with buckets up to 10 s: "slow" has 2 % of its holds above 10 s (p99 in +Inf),
    // "fast" (the control) none.
    for (let i = 0; i < 400; i++) {
      team.histogram.record(i < 8 ? 30 : 0.2 + (i % 10) / 10, { lock: 'report:lock:slow:{id}' });
      team.histogram.record(0.2 + (i % 10) / 10, { lock: 'report:lock:fast:{id}' });
    }
    prometheus = await startPrometheus([new URL(endpoint.url).host, new URL(team.url).host]);
    // Poll until every lock and every team hold has been scraped (1 s scrapes; a loaded machine may take longer).
    await prometheus.waitFor('sum(ttl_advisor_lock_outcomes_total)', (v) => v === TOTAL, 120_000);
    await prometheus.waitFor('sum(team_lock_seconds_count)', (v) => v === 800, 120_000);
    await prometheus.waitFor('count(ttl_advisor_lock_ttl)', (v) => v === PLAN.length, 120_000);
    // Prometheus behind a proxy that demands a bearer token, as a gateway in front of Mimir would.
    proxy = createServer((req, res) => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401, { 'Content-Type': 'text/plain' }).end('Unauthorized');
      const upstream = request(`${prometheus.url}${req.url}`, { method: req.method, headers: { ...req.headers, host: new URL(prometheus.url).host } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    const port = await freePort();
    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${port}`;
  }, 300_000);

  afterAll(async () => {
    await new Promise((resolve) => proxy?.close(resolve));
    await prometheus?.stop();
    await endpoint?.close();
    await team?.close();
    redis?.disconnect();
  });

  it('report --prometheus: the same counts, each p99 in the bucket that holds the database’s, never below it', async () => {
    const fromDb = await runCli(['report', '--db', db, '--format', 'json', '--out', join(dir, 'db')]);
    const fromProm = await runCli(['report', '--prometheus', prometheus.url, '--format', 'json', '--out', join(dir, 'prom')]);
    expect(fromDb.code, fromDb.stderr).toBe(0);
    expect(fromProm.code, fromProm.stderr).toBe(0);
    console.log(`--db:\n${fromDb.stdout}\n--prometheus:\n${fromProm.stdout}`);
    const dbReport = readReport(join(dir, 'db'));
    const promReport = readReport(join(dir, 'prom'));
    expect(promReport.sources).toEqual([prometheus.url]);
    expect(Object.keys(promReport.byPattern).sort()).toEqual(Object.keys(dbReport.byPattern).sort());
    for (const [pattern, d] of Object.entries(dbReport.byPattern)) {
      const p = promReport.byPattern[pattern]!;
      expect([p.count, p.holdCount, p.outcomes.released], pattern).toEqual([d.count, d.holdCount, d.outcomes.released]);
      expect(p.currentTtlMs, pattern).toBe(d.currentTtlMs);
      // The database's p99 is within 0.1 % above the truth; the truth lies in Prometheus's bucket (a, b].
      expect(p.p99Bucket!.lowMs, pattern).toBeLessThan(d.p99Ms);
      expect(d.p99Ms, pattern).toBeLessThanOrEqual(p.p99Bucket!.highMs! * 1.001);
      expect(p.p99Ms * 1.001, pattern).toBeGreaterThanOrEqual(d.p99Ms);
      expect(p.verdict, pattern).toBe(d.verdict);
    }
    // The control for exact counts: PromQL's increase() over the same window extrapolates, and a counter
    // that Prometheus first saw at its final value (born before the first scrape) has not grown at all to it.
    // (No answer at all while Prometheus holds a single scrape: increase() needs two.)
    const [increase] = await prometheus.query('sum(increase(ttl_advisor_lock_outcomes_total[2h]))');
    expect(increase ? Number(increase.value[1]) : 0).not.toBe(TOTAL);
    // The resolution is said, per pattern, on the terminal too.
    expect(fromProm.stdout).toMatch(/order:lock:product:\{id\}: p99 between \d[\d.]* ms and \d[\d.]* ms \(a histogram bucket/);
  });

  it('check --prometheus agrees with check --db on every verdict of the same policy file', async () => {
    const policy = join(dir, 'policy.json');
    writeFileSync(policy, JSON.stringify({ locks: { 'order:lock:product:{id}': { ttlMs: 4000 }, 'stock:lock:sku:{id}': { ttlMs: 250 }, 'cart:lock:user:{id}': { ttlMs: 30000 } } }, null, 2) + '\n');
    const fromDb = await runCli(['check', '--policy', policy, '--db', db, '--format', 'json', '--min-window', '0']);
    const fromProm = await runCli(['check', '--policy', policy, '--prometheus', prometheus.url, '--format', 'json', '--min-window', '0']);
    const verdicts = (stdout: string) =>
      Object.fromEntries(checkRows(stdout).map((r) => [r.pattern, [r.verdict, r.failing, r.apply]]));
    expect(verdicts(fromProm.stdout)).toEqual(verdicts(fromDb.stdout));
    // The control: the stock locks' 250 ms fails. A 60–99 ms hold stretched past 250 ms by a stalled event loop (a
    // loaded CI box) makes that lock expire, and the verdict 'expired' — which fails too, in both sources alike.
    expect(['too-short', 'expired']).toContain(verdicts(fromDb.stdout)['stock:lock:sku:{id}']![0]);
    expect(fromProm.code).toBe(fromDb.code);
    expect(fromProm.code).toBe(1);
  });

  it('refuses a p99 above the last bucket, with the bound, and apply leaves it (control: the fast lock of the same histogram is advised)', async () => {
    const args = ['--prometheus', prometheus.url, '--metric', 'team_lock_seconds', '--pattern-label', 'lock'];
    const report = await runCli(['report', ...args, '--format', 'md,html', '--out', join(dir, 'team')]);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toContain('report:lock:slow:{id}: p99 is above 10 s, the last bucket: the buckets cannot say how far');
    expect(report.stdout).toMatch(/report:lock:fast:\{id\}: p99 between 1 s and 2.5 s/);
    expect(report.stdout).toMatch(/report:lock:slow:\{id\}\s+400\s+≥ 10 s\s+0 µs\s+none: p99 > 10 s/);
    for (const file of ['ttl-report.md', 'ttl-report.html']) {
      expect(readFileSync(join(dir, 'team', file), 'utf8'), file).toContain('p99 is above 10 s, the last bucket: the buckets cannot say how far');
    }
    expect(readFileSync(join(dir, 'team', 'ttl-report.html'), 'utf8')).toMatch(/p99 between 1 s and 2.5 s/);

    const policy = join(dir, 'team-policy.json');
    writeFileSync(policy, JSON.stringify({ locks: { 'report:lock:slow:{id}': { ttlMs: 5000 }, 'report:lock:fast:{id}': { ttlMs: 60000 } } }, null, 2) + '\n');
    const apply = await runCli(['apply', '--policy', policy, ...args, '--min-window', '0', '--dry-run']);
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stdout).toContain('skipped report:lock:slow:{id} (5 s): p99 is above 10 s, the last bucket: the buckets cannot say how far');
    expect(apply.stdout).toMatch(/changed report:lock:fast:\{id\}: 1 min → 7\.5 s/);
    const fresh = join(dir, 'team-init.json');
    const init = await runCli(['init', '--policy', fresh, ...args, '--min-window', '0']);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('report:lock:slow:{id} (no recommendation yet): p99 is above 10 s, the last bucket: the buckets cannot say how far');
    expect(Object.keys((JSON.parse(readFileSync(fresh, 'utf8')) as { locks: object }).locks)).toEqual(['report:lock:fast:{id}']);
    const check = await runCli(['check', '--policy', policy, ...args, '--format', 'json', '--min-window', '0']);
    const rows = checkRows(check.stdout);
    expect(rows.find((r) => r.pattern === 'report:lock:slow:{id}')).toMatchObject({ verdict: 'insufficient-data', failing: false });
    expect(rows.find((r) => r.pattern === 'report:lock:fast:{id}')).toMatchObject({ verdict: 'too-long' });
  });

  it('a Prometheus that wants a token: 401 is one line and exit 2, the token never shown (control: with it, the report)', async () => {
    const without = await runCli(['report', '--prometheus', proxyUrl, '--format', 'json', '--out', join(dir, 'auth')]);
    expect(without.code).toBe(2);
    expect(without.stderr).toMatch(/^ttl-advisor: Prometheus at http:\/\/127\.0\.0\.1:\d+ refused the request \(HTTP 401\): set PROMETHEUS_BEARER_TOKEN[^\n]*\n$/);
    expect(without.stdout).toBe('');
    for (const [token, code] of [[`${TOKEN}-wrong`, 2], [TOKEN, 0]] as const) {
      process.env.PROMETHEUS_BEARER_TOKEN = token;
      try {
        const run = await runCli(['check', '--policy', join(dir, 'policy.json'), '--prometheus', proxyUrl, '--format', 'md', '--min-window', '0']);
        expect(run.code === 2 ? 2 : 0, run.stderr).toBe(code);
        if (code === 2) {
          expect(run.stderr.split('\n')).toHaveLength(2);
          // It says the token it was sent was refused, not to set the variable that is set.
          expect(run.stderr).toMatch(/refused the request \(HTTP 401\): the bearer token it was sent was not accepted\n$/);
        }
        else expect(run.stdout).toContain('stock:lock:sku:{id}');
        expect(run.stdout + run.stderr).not.toContain(TOKEN);
      } finally {
        delete process.env.PROMETHEUS_BEARER_TOKEN;
      }
    }
  });

  it('an unreachable or non-Prometheus URL is one line and exit 2; credentials in the URL are redacted; --db with it is refused', async () => {
    const closed = await freePort();
    const refused = await runCli(['report', '--prometheus', `http://reader:hunter2@127.0.0.1:${closed}`, '--out', join(dir, 'x')]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(`ttl-advisor: Cannot reach Prometheus at http://reader:***@127.0.0.1:${closed}: connection refused\n`);
    // Not the API: the metrics endpoint itself answers text, not JSON.
    const foreign = await runCli(['report', '--prometheus', endpoint.url.replace('/metrics', ''), '--out', join(dir, 'x')]);
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toMatch(/^ttl-advisor: Prometheus at http:\/\/127\.0\.0\.1:\d+ did not answer as the Prometheus API \(HTTP 404[^\n]*\n$/);
    // A server that never answers: the timeout.
    const silent = createServer(() => undefined);
    const port = await freePort();
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
    try {
      const timedOut = await runCli(['report', '--prometheus', `http://127.0.0.1:${port}`, '--prometheus-timeout', '0.5', '--out', join(dir, 'x')]);
      expect(timedOut.code).toBe(2);
      expect(timedOut.stderr).toBe(`ttl-advisor: Prometheus at http://127.0.0.1:${port} did not answer within 0.5 s\n`);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
    const both = await runCli(['report', '--prometheus', prometheus.url, '--db', db, '--out', join(dir, 'x')]);
    expect(both).toMatchObject({ code: 2, stderr: 'ttl-advisor: --prometheus and --db are exclusive: read from one of them\n' });
    const metricAlone = await runCli(['report', '--db', db, '--metric', 'x', '--out', join(dir, 'x')]);
    expect(metricAlone).toMatchObject({ code: 2, stderr: 'ttl-advisor: --metric needs --prometheus\n' });
  });
});

/** The rows of `check --format json`, those that need attention and the fine ones. */
function checkRows(stdout: string): { pattern: string; verdict: string; failing: boolean; apply: unknown }[] {
  const json = JSON.parse(stdout) as Record<'attention' | 'fine', { pattern: string; verdict: string; failing: boolean; apply: unknown }[]>;
  return [...json.attention, ...json.fine];
}

interface ReportPattern {
  count: number;
  holdCount: number;
  p99Ms: number;
  verdict: string;
  currentTtlMs: number;
  outcomes: { released: number };
  p99Bucket?: { lowMs: number; highMs: number | null };
}

function readReport(out: string): { sources: string[]; byPattern: Record<string, ReportPattern> } {
  const json = JSON.parse(readFileSync(join(out, 'ttl-report.json'), 'utf8')) as { sources: string[]; patterns: (ReportPattern & { pattern: string })[] };
  return { sources: json.sources, byPattern: Object.fromEntries(json.patterns.map((p) => [p.pattern, p])) };
}

/** A team's own hold-time histogram (seconds, buckets up to 10 s, the pattern in `lock`), on a /metrics endpoint of its own. */
async function startTeamHistogram(port: number): Promise<{ close(): Promise<void>; histogram: TeamHistogram; url: string }> {
  const [{ MeterProvider }, { PrometheusExporter }] = await Promise.all([import('@opentelemetry/sdk-metrics'), import('@opentelemetry/exporter-prometheus')]);
  const exporter = new PrometheusExporter({ port, host: '127.0.0.1', preventServerStart: true });
  await exporter.startServer();
  const provider = new MeterProvider({ readers: [exporter] });
  const histogram = provider.getMeter('team').createHistogram('team.lock.seconds', { unit: 's', advice: { explicitBucketBoundaries: [0.1, 0.5, 1, 2.5, 5, 10] } });
  return { histogram, url: `http://127.0.0.1:${port}/metrics`, close: () => provider.shutdown() };
}
