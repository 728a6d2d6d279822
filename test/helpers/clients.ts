import type { LockClient } from '../../src/index.js';

// Each library is loaded when a client of its kind is first asked for: a child process that uses one
// kind (the double-order incident's service instances) does not pay about 0.25 s of CPU for the others.
const ioredis5 = () => import('ioredis');
const ioredis6 = () => import('ioredis6');
const nodeRedis = () => import('redis');

/** The Redis clients users bring, each as the lock sees it. */
export const CLIENT_KINDS = ['ioredis 5', 'ioredis 6', 'node-redis 5'] as const;
export type ClientKind = (typeof CLIENT_KINDS)[number];

export interface TestClient {
  kind: ClientKind;
  client: LockClient;
  /** Disconnects without waiting for Redis (it may be dead). */
  close(): Promise<void>;
}

/** A connected client of the given kind to a single Redis. */
export async function connectClient(kind: ClientKind, url: string, options: { commandTimeoutMs?: number } = {}): Promise<TestClient> {
  if (kind === 'node-redis 5') {
    const { createClient } = await nodeRedis();
    const client = createClient({ url, socket: { reconnectStrategy: (retries) => Math.min(retries * 50, 500) } });
    client.on('error', () => undefined);
    await client.connect();
    return { kind, client, close: async () => void (await client.close().catch(() => client.destroy())) };
  }
  const ioOptions = { maxRetriesPerRequest: 1, ...(options.commandTimeoutMs && { commandTimeout: options.commandTimeoutMs }) };
  const client = kind === 'ioredis 5' ? new (await ioredis5()).Redis(url, ioOptions) : new (await ioredis6()).Redis(url, ioOptions);
  client.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve);
    client.once('end', () => reject(new Error('connection ended')));
  });
  return { kind, client, close: async () => client.disconnect() };
}

/** A connected cluster client of the given kind. */
export async function connectCluster(kind: ClientKind, nodes: { host: string; port: number }[]): Promise<TestClient> {
  if (kind === 'node-redis 5') {
    const { createCluster } = await nodeRedis();
    const cluster = createCluster({ rootNodes: nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })) });
    cluster.on('error', () => undefined);
    await cluster.connect();
    return { kind, client: cluster, close: async () => void (await cluster.close().catch(() => cluster.destroy())) };
  }
  const cluster = kind === 'ioredis 5' ? new (await ioredis5()).Cluster(nodes) : new (await ioredis6()).Cluster(nodes);
  cluster.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    cluster.once('ready', resolve);
    cluster.once('end', () => reject(new Error('cluster connection ended')));
  });
  return { kind, client: cluster, close: async () => cluster.disconnect() };
}
