import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runMeasuredCli } from '../helpers/child.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/**
 * `--prometheus` against servers that answer what no Prometheus would (issue 47: P1–P5): a point at
 * 1e20 s, a byte every 2 s, 40,000 pattern labels, NaN and 100 KB labels, a cut password. Each is a
 * server written here (node:http), answering the queries the reader sends; the CLI runs as a user runs
 * it, in a child that measures its own peak memory, where a bound is claimed.
 */

type Series = { metric: Record<string, unknown>; values?: unknown; histograms?: unknown } | unknown;

/** What the fake answers per query: the hold buckets, outcomes, sums, TTLs, native histograms (each a matrix). */
interface Answers {
  buckets?: Series[];
  outcomes?: Series[];
  sums?: Series[];
  ttl?: Series[];
  native?: Series[];
  renamed?: Series[];
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A Prometheus API stand-in: `handle` answers each request (its form read), and every request is kept. */
async function fakeServer(handle: (query: string, path: string, res: ServerResponse, req: IncomingMessage) => void) {
  const asked: { path: string; authorization: string | undefined }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      asked.push({ path: req.url ?? '', authorization: req.headers.authorization });
      handle(new URLSearchParams(body).get('query') ?? '', req.url ?? '', res, req);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, asked, port: (server.address() as { port: number }).port };
}

/** A fake that answers each query kind from `answers` (matrices), and an empty vector to the renames' instant query. */
function fakeApi(answers: Answers) {
  return fakeServer((query, path, res) => {
    const kind = path.endsWith('/api/v1/query')
      ? 'renamed'
      : query.startsWith('sum by (le, pattern)') && query.includes('hold_duration')
        ? 'buckets'
        : query.startsWith('sum by (pattern, outcome)')
          ? 'outcomes'
          : query.includes('hold_duration(?:_seconds)?_sum')
            ? 'sums'
            : query.startsWith('max by (pattern) (last_over_time')
              ? 'ttl'
              : query.startsWith('sum by (pattern) (increase(')
                ? 'native'
                : 'other';
    const result = kind === 'other' ? [] : (answers[kind] ?? []);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ status: 'success', data: { resultType: kind === 'renamed' ? 'vector' : 'matrix', result } }));
  });
}

describe('--prometheus against hostile servers (issue 47)', () => {
  it('P2: a password with an unencoded @ followed by / ? or # is refused in one line, showing no part of it and sending nothing', async () => {
    const api = await fakeApi({});
    const rule =
      'ttl-advisor: Invalid --prometheus URL (not shown: it may hold a password): an @ comes after a / ? or #, where a parser ends the password; ' +
      'percent-encode @ / ? # in the user name and password (%40 %2F %3F %23)\n';
    const out = tempDir();
    const policy = join(out, 'policy.json');
    writeFileSync(policy, JSON.stringify({ locks: { 'job:lock:{id}': { ttlMs: 5000 } } }) + '\n');
    for (const url of [
      // A parser ends the password at the first /: `s3cr` would go to 127.0.0.1 as the password, `/rest@…` as the path.
      `http://reader:s3cr@127.0.0.1:${api.port}/rest@prometheus.example:9090`,
      `http://reader:s3cr@Hunter/rest@127.0.0.1:${api.port}`,
      `http://s3cr@Hunter?rest@127.0.0.1:${api.port}`,
      `https://reader:s3cr@Hunter#rest@127.0.0.1:${api.port}/prometheus`,
    ]) {
      for (const args of [['report', '--out', out, '--format', 'json'], ['check', '--policy', policy]]) {
        const run = await runCli([...args, '--prometheus', url]);
        expect(run.code, url).toBe(2);
        expect(run.stderr, url).toBe(rule);
        expect(run.stdout + run.stderr).not.toMatch(/s3cr|Hunter|rest|reader/);
      }
    }
    expect(api.asked).toEqual([]);
    // Control: the same password percent-encoded is sent, and the URL shown with it hidden.
    const encoded = await runCli(['report', '--out', out, '--format', 'json', '--prometheus', `http://reader:s3cr%40Hunter%2Frest@127.0.0.1:${api.port}`]);
    expect(encoded.code, encoded.stderr).toBe(0);
    expect(api.asked[0]!.authorization).toBe(`Basic ${Buffer.from('reader:s3cr@Hunter/rest').toString('base64')}`);
    expect(encoded.stdout + encoded.stderr).not.toMatch(/s3cr|Hunter/);
  });

  it('P3: --prometheus-timeout is a deadline for the whole request, not for each silence: a server sending a byte every 2 s is cut off', async () => {
    const timers: NodeJS.Timeout[] = [];
    const api = await fakeServer((_query, _path, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      // A valid answer, one byte every 2 s: each byte resets an idle timeout; the whole takes minutes.
      const body = JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [] } });
      let at = 0;
      const timer = setInterval(() => {
        if (res.destroyed || at >= body.length) return void clearInterval(timer);
        res.write(body[at++]!);
      }, 2000);
      timers.push(timer);
    });
    try {
      const out = tempDir();
      const run = await runMeasuredCli(['report', '--prometheus', api.url, '--prometheus-timeout', '3', '--format', 'json', '--out', out], { timeoutMs: 45_000 });
      console.log(`P3: wall ${run.wallMs.toFixed(0)} ms under a 3 s deadline`);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toBe(`ttl-advisor: Prometheus at ${api.url} did not answer within 3 s\n`);
      // 3 s and a process's start: far below the 61 s an idle timeout let it run (and the 2 minutes the answer takes).
      expect(run.wallMs).toBeLessThan(20_000);
    } finally {
      for (const timer of timers) clearInterval(timer);
    }
  });
});
