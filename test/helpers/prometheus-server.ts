import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-server.js';

/** A Prometheus server owned by a test (Debian's `prometheus`), scraping the given targets every second. */
export interface PrometheusServer {
  readonly url: string;
  /** An instant query's result vector. */
  query(promql: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  /** Polls until `promql` returns a sample that `accept` takes (default: any), or fails after `timeoutMs`. */
  waitFor(promql: string, accept?: (value: number) => boolean, timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

export const PROMETHEUS_BINARY = process.env.PROMETHEUS_BINARY ?? '/usr/bin/prometheus';

export async function startPrometheus(targets: readonly string[]): Promise<PrometheusServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ttl-advisor-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'scrape_configs:',
      '  - job_name: ttl-advisor',
      '    static_configs:',
      `      - targets: [${targets.map((t) => JSON.stringify(t)).join(', ')}]`,
      '',
    ].join('\n'),
  );
  const proc: ChildProcess = spawn(
    PROMETHEUS_BINARY,
    [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  proc.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (proc.exitCode === null) {
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`prometheus exited: ${output}`);
    try {
      if ((await fetch(`${url}/-/ready`)).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus did not start on port ${port}: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const query = async (promql: string) => {
    const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await response.json()) as { status: string; error?: string; data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
    if (body.status !== 'success') throw new Error(`query ${promql} failed: ${body.error}`);
    return body.data.result;
  };
  const waitFor = async (promql: string, accept: (value: number) => boolean = () => true, timeoutMs = 60_000) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const [first] = await query(promql);
      if (first && accept(Number(first.value[1]))) return Number(first.value[1]);
      if (Date.now() > until) throw new Error(`no acceptable answer to ${promql} within ${timeoutMs} ms (last: ${JSON.stringify(first)})`);
      await new Promise((r) => setTimeout(r, 500));
    }
  };
  return { url, query, waitFor, stop };
}
