import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';

/** A redis-server process owned by a test: it can be killed and restarted on the same port. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** SIGKILL, as a crash would. */
  kill(): Promise<void>;
  /** Starts again on the same port (empty: nothing is persisted). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Starts a private, non-persistent redis-server on a free loopback port. */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    const proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no', '--enable-debug-command', 'local'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = proc;
    let output = '';
    proc.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    proc.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited: ${output}`);
      const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG') return;
      } catch {
        // not up yet
      } finally {
        probe.disconnect();
      }
      if (Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}: ${output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function kill(): Promise<void> {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  }

  await start();
  return { port, url: `redis://127.0.0.1:${port}`, kill, start, stop: kill };
}

/**
 * A redis-server of the test file's own (its tests may kill, pause or reconfigure it) and a client
 * on it, started before the file's tests and stopped after; `ready` runs once both are up.
 */
export function useOwnRedisServer(ready: (server: RedisServer, client: Redis) => void | Promise<void>): void {
  let server: RedisServer | undefined;
  let client: Redis | undefined;
  beforeAll(async () => {
    server = await startRedisServer();
    client = new Redis(server.url);
    client.on('error', () => undefined); // a test may kill the server under it
    await ready(server, client);
  });
  afterAll(async () => {
    client?.disconnect();
    await server?.stop();
  });
}
