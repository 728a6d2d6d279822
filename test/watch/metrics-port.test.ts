import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DURATION_BUCKETS_S } from '../../src/index.js';
import { built } from '../helpers/built.js';
import { startChild } from '../helpers/child.js';
import { startPrometheus, type PrometheusServer } from '../helpers/prometheus-server.js';
import { freePort, startRedisServer, type RedisServer } from '../helpers/redis-server.js';

const cli = built('src/cli/main.ts');

describe('watch --metrics-port: a Redis fleet’s locks into Prometheus, no file at all', () => {
  let server: RedisServer;
  let redis: Redis;
  let prometheus: PrometheusServer | undefined;
  const running: ChildProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'ttl-advisor-watch-metrics-'));

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    for (const child of running) child.kill('SIGKILL');
    await prometheus?.stop();
    redis.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('Prometheus scrapes every lock the watcher saw, under the documented names, by pattern and source', async () => {
    const port = await freePort();
    const watch = startChild(process.execPath, [cli, 'watch', '--redis', server.url, '--configure', '--metrics-port', String(port), '--metrics-host', '127.0.0.1', '--match', '*:lock:*'], running, dir);
    await watch.said('subscribed on', 30_000);
    expect(watch.output()).toContain(`Prometheus metrics at http://127.0.0.1:${port}/metrics`);

    // 12 + 8 locks of two patterns, taken and released as any client would.
    for (let i = 0; i < 20; i++) {
      const key = i < 12 ? `order:lock:product:${i}` : `cart:lock:user:${i}`;
      await redis.set(key, `token-${i}`, 'PX', 5000, 'NX');
      await new Promise((resolve) => setTimeout(resolve, 5));
      await redis.del(key);
    }
    prometheus = await startPrometheus([`127.0.0.1:${port}`]);
    await prometheus.waitFor('sum(ttl_advisor_lock_outcomes_total)', (n) => n === 20);

    const outcomes = await prometheus.query('sum by (pattern, source, outcome) (ttl_advisor_lock_outcomes_total)');
    expect(outcomes.map((r) => [r.metric.pattern, r.metric.source, r.metric.outcome, r.value[1]]).sort()).toEqual([
      ['cart:lock:user:{id}', 'watch', 'released', '8'],
      ['order:lock:product:{id}', 'watch', 'released', '12'],
    ]);
    const counts = await prometheus.query('sum by (pattern) (ttl_advisor_lock_hold_duration_count)');
    expect(Object.fromEntries(counts.map((r) => [r.metric.pattern, r.value[1]]))).toEqual({ 'cart:lock:user:{id}': '8', 'order:lock:product:{id}': '12' });
    // The buckets are the documented ones (and +Inf), in seconds: the holds of a few ms are all under 1 s.
    const buckets = await prometheus.query('ttl_advisor_lock_hold_duration_bucket{pattern="order:lock:product:{id}"}');
    expect(buckets.map((r) => r.metric.le!).sort((a, b) => Number(a.replace('+Inf', 'Infinity')) - Number(b.replace('+Inf', 'Infinity')))).toEqual([...DURATION_BUCKETS_S.map(String), '+Inf']);
    expect(Number(buckets.find((r) => r.metric.le === '1')!.value[1])).toBe(12);
    const ttl = await prometheus.query('ttl_advisor_lock_ttl{pattern="order:lock:product:{id}"}');
    expect(Number(ttl[0]!.value[1])).toBeCloseTo(5, 1);
    // Never a key or a token in a label.
    const everything = JSON.stringify(await prometheus.query('{__name__=~"ttl_advisor_.*"}'));
    expect(everything).not.toMatch(/token-|product:1\b|user:1\d/);

    watch.proc.kill('SIGTERM');
    expect((await watch.exited).code).toBe(0);
    expect(watch.output()).toMatch(/metrics: 20 recorded, 0 dropped/);
    // Metrics only: no samples database was written.
    expect(readdirSync(dir)).toEqual([]);
  });

  it('M1: SIGTERM ends it, stop summary printed, while clients hold an idle, a half-sent and a silent connection to /metrics', async () => {
    const port = await freePort();
    const watch = startChild(process.execPath, [cli, 'watch', '--redis', server.url, '--configure', '--metrics-port', String(port), '--metrics-host', '127.0.0.1', '--match', '*:lock:*'], running, dir);
    const sockets: Socket[] = [];
    const open = async () => {
      const socket = connect(port, '127.0.0.1');
      sockets.push(socket);
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      return socket;
    };
    try {
      await watch.said('subscribed on', 30_000);
      // A keep-alive client that got its answer and keeps the connection (idle), as a scraper may.
      const idle = await open();
      let answer = '';
      idle.on('data', (c: Buffer) => void (answer += c.toString()));
      idle.write('GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
      for (let i = 0; i < 100 && !answer.includes('HTTP/1.1 200'); i++) await new Promise((r) => setTimeout(r, 50));
      expect(answer).toContain('HTTP/1.1 200');
      // A request whose headers never end, and a connection that never says anything.
      (await open()).write('GET /metrics HTTP/1.1\r\nHost: x\r\n');
      await open();
      await new Promise((r) => setTimeout(r, 200));
      const stoppedAt = Date.now();
      watch.proc.kill('SIGTERM');
      const exited = await Promise.race([watch.exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 20_000))]);
      // Broken, it was still up after 125 s: a pod's grace period ends in SIGKILL and no summary.
      expect(exited, watch.output()).toBeDefined();
      expect(exited!.code).toBe(0);
      console.log(`M1: exited ${Date.now() - stoppedAt} ms after SIGTERM with 3 connections held open`);
      expect(watch.output()).toMatch(/stopped: .*metrics: \d+ recorded, 0 dropped/);
    } finally {
      for (const socket of sockets) socket.destroy();
      if (watch.proc.exitCode === null) watch.proc.kill('SIGKILL');
    }
  });

  it('a port that cannot be had is one line and exit 2, before anything is watched', async () => {
    const taken = createServer();
    const port = await new Promise<number>((resolve) => taken.listen(0, '127.0.0.1', () => resolve((taken.address() as { port: number }).port)));
    try {
      const watch = startChild(process.execPath, [cli, 'watch', '--redis', server.url, '--metrics-port', String(port), '--metrics-host', '127.0.0.1'], running, dir);
      const { code } = await watch.exited;
      expect(code).toBe(2);
      expect(watch.output().trim().split('\n')).toEqual([`ttl-advisor: Cannot serve metrics on 127.0.0.1:${port}: EADDRINUSE`]);
      const bad = startChild(process.execPath, [cli, 'watch', '--redis', server.url, '--metrics-port', '70000'], running, dir);
      expect((await bad.exited).code).toBe(2);
      expect(bad.output()).toMatch(/Expected --metrics-port to be a port from 1 to 65535, got "70000"/);
    } finally {
      taken.close();
    }
  });
});
