import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeSource, p99BucketOf } from '../../src/analyze/analyze-source.js';
import { PrometheusError } from '../../src/errors.js';
import { PrometheusClient } from '../../src/source/prometheus-client.js';
import { readPrometheus } from '../../src/source/prometheus.js';
import { hourlyGrowth } from '../../src/source/promql.js';
import { resolutionText } from '../../src/report/decision-text.js';

const HOUR_MS = 3_600_000;

/** A stand-in for the API that answers canned JSON and keeps what it was asked (the real one is in test/cli/prometheus.test.ts). */
function fakeApi(answer: (form: URLSearchParams, req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; server: Server; asked: { path: string; form: URLSearchParams; headers: IncomingMessage['headers'] }[] }> {
  const asked: { path: string; form: URLSearchParams; headers: IncomingMessage['headers'] }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      asked.push({ path: req.url ?? '', form, headers: req.headers });
      answer(form, req, res);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server, asked })));
}

const matrix = (result: unknown[]) => JSON.stringify({ status: 'success', data: { resultType: 'matrix', result } });

describe('readPrometheus over native histograms', () => {
  let api: Awaited<ReturnType<typeof fakeApi>>;
  const untilMs = Date.UTC(2026, 11, 4, 10, 30);
  // Schema 3: bounds 2^(1/8) apart. 400 holds: 390 in (2^-6, 2^-5.875] s, 10 in (2^-3, 2^-2.875] s (p99 there).
  const bucket = (k: number, n: number): [number, string, string, string] => [0, String(2 ** (k / 8)), String(2 ** ((k + 1) / 8)), String(n)];

  beforeAll(async () => {
    api = await fakeApi((form, _req, res) => {
      const query = form.get('query') ?? '';
      const native = query.startsWith('sum by (pattern) (increase(');
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        matrix(
          native
            ? [{ metric: { pattern: 'job:lock:{id}' }, histograms: [[Math.ceil(untilMs / HOUR_MS) * 3600, { count: '400', sum: '7.9', buckets: [bucket(-48, 389.6), bucket(-24, 10.2)] }]] }]
            : [],
        ),
      );
    });
  });
  afterAll(() => api.server.close());

  it('reads the buckets at their upper bounds, states the schema, and sends the headers it was given', async () => {
    const client = new PrometheusClient({ url: `${api.url}/prometheus/`, headers: { 'X-Scope-OrgID': 'tenant-a' }, auth: { kind: 'basic', username: 'u', password: 'p' } });
    const data = await readPrometheus(client, { sinceMs: untilMs - 2 * HOUR_MS, untilMs });
    // Range queries per hour, and one instant query: the pattern renames an OtelRecorder exported.
    expect(api.asked.filter((a) => a.path !== '/prometheus/api/v1/query_range').map((a) => a.path)).toEqual(['/prometheus/api/v1/query']);
    expect(api.asked[0]!.headers['x-scope-orgid']).toBe('tenant-a');
    expect(api.asked[0]!.headers.authorization).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
    expect(data.patterns).toHaveLength(1);
    const [pattern] = data.patterns;
    expect(pattern!.layout).toEqual({ kind: 'native', schema: 3 });
    const analysis = analyzeSource(data, { sinceMs: untilMs - 2 * HOUR_MS, untilMs });
    const p = analysis.patterns[0]!;
    expect([p.count, p.holdCount]).toEqual([400, 400]);
    expect(p.p99Bucket).toMatchObject({ lowMs: 2 ** -3 * 1000, highMs: 2 ** (-23 / 8) * 1000, nativeSchema: 3 });
    // The figure is the bucket's upper bound (within the store's 0.1 %), never below it.
    expect(p.holdMs.p99).toBeGreaterThanOrEqual(2 ** (-23 / 8) * 1000 * 0.999);
    expect(resolutionText(p.p99Bucket!)).toMatch(/^p99 between 125 ms and 136 ms \(a native histogram of schema 3: its buckets are 9\.1 % wide/);
  });
});

describe('p99BucketOf: the resolution of classic buckets', () => {
  const layout = { kind: 'classic' as const, boundsMs: [100, 500, 1000, 10_000] };
  it('names the bucket (a, b] of the nearest rank, and an interpolated figure inside it', () => {
    const b = p99BucketOf({ layout, holdBuckets: [{ lowMs: 0, highMs: 100, count: 980 }, { lowMs: 1000, highMs: 10_000, count: 20 }] });
    expect(b).toMatchObject({ lowMs: 1000, highMs: 10_000 });
    expect(b!.estimateMs).toBeGreaterThan(1000);
    expect(b!.estimateMs).toBeLessThanOrEqual(10_000);
  });
  it('a p99 in +Inf is above the last finite bound of the layout, not of the buckets that have counts', () => {
    const b = p99BucketOf({ layout, holdBuckets: [{ lowMs: 0, highMs: 100, count: 970 }, { lowMs: 10_000, highMs: Infinity, count: 30 }] });
    expect(b).toEqual({ lowMs: 10_000, highMs: null });
    // Control: 1 % in +Inf leaves the p99 (rank 990 of 1000) in a finite bucket.
    expect(p99BucketOf({ layout, holdBuckets: [{ lowMs: 0, highMs: 100, count: 990 }, { lowMs: 10_000, highMs: Infinity, count: 10 }] })).toMatchObject({ lowMs: 0, highMs: 100 });
  });
});

describe('PrometheusClient: failures are one line, with no credential', () => {
  it('403, an HTML page and a refused query', async () => {
    let status = 403;
    let body = 'forbidden';
    const api = await fakeApi((_form, _req, res) => void res.writeHead(status, { 'Content-Type': status === 400 ? 'application/json' : 'text/html' }).end(body));
    try {
      const client = new PrometheusClient({ url: api.url.replace('http://', 'http://alice:pa55@'), auth: { kind: 'bearer', token: 'tok-123' } });
      const failure = async () => {
        const error = await client.query('up', Date.now()).then(() => undefined, (e: unknown) => e);
        expect(error).toBeInstanceOf(PrometheusError);
        const message = (error as Error).message;
        expect(message).not.toMatch(/\n|tok-123|pa55/);
        return message;
      };
      expect(await failure()).toMatch(/refused the request \(HTTP 403\)/);
      expect(api.asked[0]!.headers.authorization).toBe('Bearer tok-123');
      status = 200;
      body = '<html>Grafana</html>';
      expect(await failure()).toMatch(/did not answer as the Prometheus API \(HTTP 200, text\/html/);
      status = 400;
      body = JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error:\nunexpected' });
      expect(await failure()).toBe(`Prometheus at ${api.url.replace('http://', 'http://alice:***@')} refused a query (HTTP 400, bad_data): parse error: unexpected`);
    } finally {
      api.server.close();
    }
  });
});

describe('hourlyGrowth', () => {
  it('falls back to increase() only for series that reset', () => {
    expect(hourlyGrowth('x')).toBe('((last_over_time(x[1h]) - (last_over_time(x[1h] offset 1h) or last_over_time(x[1h]) * 0)) unless resets(x[1h]) > 0) or increase(x[1h])');
  });
});

describe('readPrometheus: series exported before their position was learned', () => {
  let api: Awaited<ReturnType<typeof fakeApi>>;
  const untilMs = Date.UTC(2026, 11, 4, 10, 30);
  const bucket = (k: number, n: number): [number, string, string, string] => [0, String(2 ** (k / 8)), String(2 ** ((k + 1) / 8)), String(n)];
  // An OtelRecorder exports a lock keyed by names under its first 32 names, then under the learned pattern; and {other}.
  const names = Array.from({ length: 32 }, (_, i) => `lock:account:user${String.fromCharCode(97 + (i % 26), 97 + Math.floor(i / 26))}`);
  const series: [string, number][] = [...names.map((n): [string, number] => [n, 1]), ['lock:account:{id}', 968], ['cron:lock:digest', 300], ['{other}', 50]];

  beforeAll(async () => {
    api = await fakeApi((form, req, res) => {
      const query = form.get('query') ?? '';
      const native = query.startsWith('sum by (pattern) (increase(');
      const t = Math.ceil(untilMs / HOUR_MS) * 3600;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      // The renames the recorder exported (ttl_advisor_pattern_renamed), asked once over the window.
      if (req.url!.endsWith('/api/v1/query') && query.includes('ttl_advisor_pattern_renamed')) {
        return void res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result: names.map((pattern) => ({ metric: { pattern, learned: 'lock:account:{id}' }, value: [t, '1'] })) } }));
      }
      res.end(matrix(native ? series.map(([pattern, n]) => ({ metric: { pattern }, histograms: [[t, { count: String(n), sum: String(n * 0.01), buckets: [bucket(-56, n)] }]] })) : []));
    });
  });
  afterAll(() => api.server.close());

  it('reads them as one pattern, keeps a few job names apart, and counts {other} apart with no advice', async () => {
    const data = await readPrometheus(new PrometheusClient({ url: api.url }), { sinceMs: untilMs - 2 * HOUR_MS, untilMs });
    expect(data.patterns.map((p) => p.pattern).sort()).toEqual(['cron:lock:digest', 'lock:account:{id}', '{other}']);
    const analysis = analyzeSource(data, { sinceMs: untilMs - 2 * HOUR_MS, untilMs });
    expect(analysis.patterns.find((p) => p.pattern === 'lock:account:{id}')!.count).toBe(1000);
    expect(analysis.patterns.map((p) => p.pattern)).not.toContain('{other}');
    expect(analysis.unattributed?.count).toBe(50);
  });
});
