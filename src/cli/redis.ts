import { Cluster, Redis } from 'ioredis';
import { TtlAdvisorError } from '../errors.js';

/** A Redis URL with its password (and user) hidden, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/** The `--redis` URL, or a clear error when neither it nor REDIS_URL is given. */
export function requireRedisUrl(url: string | undefined): string {
  if (!url) throw new TtlAdvisorError('Expected --redis <url> or the REDIS_URL environment variable');
  return url;
}

/** Connects to the URL's server, or to the whole cluster when it is a Cluster node. Never prints the password. */
export async function connectRedis(url: string): Promise<Redis | Cluster> {
  const shown = redactUrl(url);
  let redis: Redis;
  try {
    redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null, connectTimeout: 5000 });
  } catch (error) {
    throw new TtlAdvisorError(`Invalid Redis URL ${shown}: ${(error as Error).message}`);
  }
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    const info = await redis.info('cluster');
    if (!/cluster_enabled:1/.test(info)) return redis;
  } catch (error) {
    redis.disconnect();
    throw new TtlAdvisorError(`Cannot connect to Redis at ${shown}: ${(error as Error).message}`);
  }
  const { host, port, username, password } = redis.options;
  redis.disconnect();
  const cluster = new Cluster([{ host: host ?? '127.0.0.1', port: port ?? 6379 }], {
    redisOptions: { username, password },
    clusterRetryStrategy: () => null,
  });
  cluster.on('error', () => undefined);
  return cluster;
}
