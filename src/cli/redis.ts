import { TtlAdvisorError } from '../errors.js';
import type { RedisCommandClient } from '../redis-client.js';
import { redactUrl } from '../redact-url.js';
import { connectionFailureText, nodeOfUrl, noAnswerText, parseRedisUrl, type RedisUrlNode } from '../redis-url.js';

/**
 * The `--redis` URL, checked before a command says or opens anything (see
 * {@link parseRedisUrl}); a clear error when neither it nor REDIS_URL is given.
 */
export function requireRedisUrl(url: string | undefined): string {
  if (!url) throw new TtlAdvisorError('Expected --redis <url> or the REDIS_URL environment variable');
  parseRedisUrl(url);
  return url;
}

/** A connection the CLI opened, whichever client library made it. */
export interface Connection {
  client: RedisCommandClient;
  close(): void;
}

/** How a command wants its connection: `inspect` fails fast, `follow` reconnects after a restart (for `collect`). */
type Purpose = 'inspect' | 'follow';

/** Which client library connects: the one installed (ioredis first), or one named (tests reach node-redis so). */
type Library = 'installed' | 'ioredis' | 'redis';

/**
 * Connects with the Redis client the user installed: ioredis, or else node-redis
 * (`redis`). `inspect` connections fail fast and, given a Cluster node, connect
 * to the whole cluster; `follow` connections retry for ever. Never prints the password.
 */
export async function connectRedis(
  url: string,
  purpose: Purpose = 'inspect',
  { timeoutMs = CONNECT_TIMEOUT_MS, cancel, library = 'installed' }: { timeoutMs?: number; cancel?: AbortSignal; library?: Library } = {},
): Promise<Connection> {
  const shown = redactUrl(url);
  const node = nodeOfUrl(url);
  const ioredis = library === 'redis' ? undefined : await import('ioredis').catch(() => undefined);
  const nodeRedis = ioredis || library === 'ioredis' ? undefined : await import('redis').catch(() => undefined);
  if (!ioredis && !nodeRedis) throw new TtlAdvisorError('This command needs a Redis client: npm install ioredis (or redis)');
  // A server that accepts the connection and never answers must not hang the command: past the
  // timeout, or when `cancel` aborts, the half-open client is closed and the command fails.
  const abandon = new AbortController();
  const onCancel = () => abandon.abort(new TtlAdvisorError('stopped before Redis answered'));
  cancel?.addEventListener('abort', onCancel, { once: true });
  const timer = setTimeout(() => abandon.abort(new TtlAdvisorError(`Cannot connect to Redis at ${shown}: ${noAnswerText(node, timeoutMs)}`)), timeoutMs);
  const connecting = ioredis
    ? connectIoredis(ioredis, url, { shown, node }, purpose, abandon.signal)
    : connectNodeRedis(nodeRedis!, url, { shown, node }, purpose, abandon.signal);
  const abandoned = new Promise<never>((_, reject) => abandon.signal.addEventListener('abort', () => reject(abandon.signal.reason), { once: true }));
  try {
    return await Promise.race([connecting, abandoned]);
  } finally {
    clearTimeout(timer);
    cancel?.removeEventListener('abort', onCancel);
  }
}

/** How long a command waits for Redis to accept the connection and answer (ms). */
export const CONNECT_TIMEOUT_MS = 5000;

type IoredisModule = Pick<typeof import('ioredis'), 'Redis' | 'Cluster'>;

/** The URL as messages show it (no password), and the node it names. */
interface Target {
  shown: string;
  node: RedisUrlNode;
}

async function connectIoredis(lib: IoredisModule, url: string, { shown, node }: Target, purpose: Purpose, abandon: AbortSignal): Promise<Connection> {
  const { Redis, Cluster } = lib;
  let redis: InstanceType<typeof Redis>;
  try {
    redis =
      purpose === 'follow'
        ? new Redis(url, { maxRetriesPerRequest: null, lazyConnect: true })
        : new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null, connectTimeout: CONNECT_TIMEOUT_MS, commandTimeout: CONNECT_TIMEOUT_MS });
  } catch (error) {
    throw new TtlAdvisorError(`Invalid Redis URL ${shown}: ${(error as Error).message}`);
  }
  let cause: unknown;
  redis.on('error', (error) => (cause ??= error));
  abandon.addEventListener('abort', () => hangUp(redis), { once: true });
  const restore = quietIoredisWarnings();
  try {
    await redis.connect();
    // ioredis only emits an error when the URL's SELECT fails, and goes on in database 0: ask again, and hear the answer.
    if (node.db) await redis.select(node.db).catch((error: unknown) => Promise.reject(new TtlAdvisorError(noDatabaseText(shown, node.db!, error))));
    if (purpose === 'follow' || !/cluster_enabled:1/.test(await redis.info('cluster'))) return { client: redis, close: () => hangUp(redis) };
  } catch (error) {
    hangUp(redis);
    if (error instanceof TtlAdvisorError) throw error;
    throw new TtlAdvisorError(`Cannot connect to Redis at ${shown}: ${connectionFailureText(cause ?? error, node)}`);
  } finally {
    restore();
  }
  const { host, port, username, password } = redis.options;
  hangUp(redis);
  const cluster = new Cluster([{ host: host ?? '127.0.0.1', port: port ?? 6379 }], {
    redisOptions: { username, password },
    clusterRetryStrategy: () => null,
  });
  cluster.on('error', () => undefined);
  abandon.addEventListener('abort', () => cluster.disconnect(), { once: true });
  return { client: cluster, close: () => cluster.disconnect() };
}

/**
 * Disconnects at once: ioredis ends its socket politely, and a server that never answers
 * never closes its side, which keeps the process alive for seconds after the command is done.
 */
function hangUp(redis: { disconnect(): void; stream?: { destroy?: () => void } }): void {
  redis.disconnect();
  redis.stream?.destroy?.();
}

type NodeRedisModule = Pick<typeof import('redis'), 'createClient' | 'createCluster'>;

async function connectNodeRedis(lib: NodeRedisModule, url: string, { shown, node }: Target, purpose: Purpose, abandon: AbortSignal): Promise<Connection> {
  const client = lib.createClient({
    url,
    socket: purpose === 'follow' ? { reconnectStrategy: (retries) => Math.min(100 * retries, 2000) } : { reconnectStrategy: false, connectTimeout: 5000 },
  });
  let cause: unknown;
  // node-redis sends the URL's SELECT while connecting; a `follow` client would reconnect and fail again for ever.
  let noDatabase!: (error: unknown) => void;
  const selectFailed = new Promise<never>((_, reject) => (noDatabase = reject));
  selectFailed.catch(() => undefined);
  client.on('error', (error) => {
    cause ??= error;
    if (isNoDatabase(error, node)) noDatabase(error);
  });
  // node-redis throws from destroy() on a client that is closed already (as a failed connect leaves it).
  const destroy = () => void (client.isOpen && client.destroy());
  abandon.addEventListener('abort', destroy, { once: true });
  try {
    // Raced as a Promise<unknown>: racing the client's own type made the compiler relate node-redis's client
    // types to each other, 4.5 s of the type check's 22 s.
    const connected: Promise<unknown> = client.connect();
    await Promise.race([connected, selectFailed]);
    // ioredis's `?db=` too: node-redis reads only the path. Selected so, a reconnect selects it again.
    if (node.db) await client.select(node.db);
    if (purpose === 'follow' || !/cluster_enabled:1/.test(await client.info('cluster'))) return { client, close: destroy };
  } catch (error) {
    destroy();
    if (isNoDatabase(error, node)) throw new TtlAdvisorError(noDatabaseText(shown, node.db!, error));
    throw new TtlAdvisorError(`Cannot connect to Redis at ${shown}: ${connectionFailureText(cause ?? error, node)}`);
  }
  destroy();
  const cluster = lib.createCluster({ rootNodes: [{ url }] });
  cluster.on('error', () => undefined);
  abandon.addEventListener('abort', () => cluster.destroy(), { once: true });
  try {
    await cluster.connect();
  } catch (error) {
    cluster.destroy();
    throw new TtlAdvisorError(`Cannot connect to the Redis Cluster at ${shown}: ${(error as Error).message}`);
  }
  return { client: cluster, close: () => cluster.destroy() };
}

/** Whether a connect failed on the URL's SELECT ("DB index is out of range", "SELECT is not allowed in cluster mode"). */
function isNoDatabase(error: unknown, node: RedisUrlNode): boolean {
  return Boolean(node.db) && /\bDB index\b|\bSELECT\b/i.test(String((error as Error)?.message));
}

/** A database the server does not have (`/99` of 16, or any but 0 on a Cluster): refused, not replaced by database 0. */
function noDatabaseText(shown: string, db: number, error: unknown): string {
  return `Redis at ${shown} has no database ${db} (${String((error as Error)?.message ?? error).trim()})`;
}

/**
 * ioredis prints some warnings itself (`[WARN] This Redis server's default user does
 * not require a password…`); a command's output must carry only its own lines.
 * Silenced while connecting, then restored.
 */
function quietIoredisWarnings(): () => void {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith('[WARN]')) return;
    warn(...args);
  };
  return () => {
    console.warn = warn;
  };
}
