import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './redis-server.js';

/** A three-master Redis Cluster on loopback, owned by one test file. */
export interface RedisCluster {
  readonly ports: number[];
  stop(): Promise<void>;
}

export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'ttl-advisor-cluster-'));
  const ports: number[] = [];
  for (let i = 0; i < masters; i++) ports.push(await freePort());
  const children: ChildProcess[] = ports.map((port) =>
    spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
        '--dir', dir, '--save', '', '--appendonly', 'no', '--protected-mode', 'no'],
      { stdio: 'ignore' },
    ),
  );
  const stop = async () => {
    await Promise.all(
      children.map((c) => (c.exitCode !== null ? undefined : new Promise((resolve) => (c.once('exit', resolve), c.kill('SIGKILL'))))),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) await waitFor(async () => (await ping(port)) === 'PONG');
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], {
      encoding: 'utf8',
    });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    for (const port of ports) {
      await waitFor(async () => {
        const r = new Redis({ port, lazyConnect: true, retryStrategy: () => null });
        try {
          await r.connect();
          return /cluster_state:ok/.test(await r.cluster('INFO'));
        } finally {
          r.disconnect();
        }
      });
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { ports, stop };
}

async function ping(port: number): Promise<string | undefined> {
  const r = new Redis({ port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return await r.ping();
  } catch {
    return undefined;
  } finally {
    r.disconnect();
  }
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not ready yet
    }
    if (Date.now() > deadline) throw new Error('timed out waiting for the cluster');
    await new Promise((r) => setTimeout(r, 100));
  }
}
