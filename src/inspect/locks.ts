import { patternOf } from '../keys/pattern.js';
import { parseToken } from '../token.js';
import {
  isIoredisCluster,
  isNodeRedisCluster,
  sendBinaryCommandOf,
  type IoredisCommandClient,
  type NodeRedisCommandClient,
  type RedisCommandClient,
  type SendBinaryCommand,
} from '../redis-client.js';
/** A lock key held right now. */
export interface LiveLock {
  key: string;
  pattern: string;
  /** The holder's token (the key's value). */
  token: string;
  /** Who holds it, when the token is one of this package's locks' (see `token.ts`). */
  holder?: string;
  /** When its holder started acquiring it (epoch ms, the holder's clock), for our locks' tokens. */
  acquiredAtMs?: number;
  /** The key's bytes, base64, when they are not valid UTF-8 (`key` then shows the odd bytes as `\\x..`). */
  keyBase64?: string;
  /** PTTL: milliseconds until the lock expires. */
  remainingMs: number;
}

/** Options of {@link listLocks}. */
export interface ListLocksOptions {
  /** SCAN MATCH pattern. @default '*lock*' */
  match?: string;
  /** SCAN COUNT hint per call. @default 1000 */
  count?: number;
  /** Stop after this many locks (the rest are counted, not listed). @default 10000 */
  limit?: number;
}

export interface LiveLocks {
  locks: LiveLock[];
  /** Keys SCAN returned that matched `match`. */
  scanned: number;
  /** Locks beyond `limit`, not listed. */
  omitted: number;
}

/**
 * Lists live locks: keys matching `match` that hold a string and have a TTL,
 * soonest to expire first. Walks the keyspace with SCAN (never KEYS, which
 * blocks Redis on a large keyspace), on every master of a Cluster. Any client
 * works: ioredis `Redis` or `Cluster`, node-redis client or cluster.
 */
export async function listLocks(redis: RedisCommandClient, options: ListLocksOptions = {}): Promise<LiveLocks> {
  const match = options.match ?? '*lock*';
  const count = options.count ?? 1000;
  const limit = options.limit ?? 10_000;
  const locks: LiveLock[] = [];
  let scanned = 0;
  let omitted = 0;
  for (const send of await mastersOf(redis)) {
    let cursor = '0';
    do {
      // Bytes, not strings: a key that is not valid UTF-8 would come back as another key and be missed.
      const [next, found] = (await send(['SCAN', cursor, 'MATCH', match, 'COUNT', count])) as [unknown, Buffer[]];
      cursor = String(next);
      const keys = found;
      scanned += keys.length;
      // Sent together, so they travel as one pipeline; a lock is a string with an expiry.
      const replies = await Promise.all(
        keys.map((key) =>
          Promise.all([send(['TYPE', key]), send(['GET', key]).catch(() => undefined), send(['PTTL', key])]).catch(() => undefined),
        ),
      );
      keys.forEach((bytes, i) => {
        const [type, value, pttl] = replies[i] ?? [];
        if (String(type) !== 'string' || !Buffer.isBuffer(value) || typeof pttl !== 'number' || pttl <= 0) return;
        if (locks.length >= limit) {
          omitted++;
          return;
        }
        const key = decodeBytes(bytes);
        const token = decodeBytes(value);
        const lock: LiveLock = { key, pattern: patternOf(key), token, remainingMs: pttl };
        const ours = parseToken(token);
        if (ours) {
          lock.holder = ours.holder;
          lock.acquiredAtMs = ours.acquiredAtMs;
        }
        if (!isUtf8(bytes)) lock.keyBase64 = bytes.toString('base64');
        locks.push(lock);
      });
    } while (cursor !== '0');
  }
  locks.sort((a, b) => a.remainingMs - b.remainingMs || (a.key < b.key ? -1 : 1));
  return { locks, scanned, omitted };
}

/** One command sender per master: the client itself, or each master of a Cluster (keys live on one node each). */
async function mastersOf(redis: RedisCommandClient): Promise<SendBinaryCommand[]> {
  if (isIoredisCluster(redis)) {
    await clusterReady(redis as unknown as IoredisCluster);
    return redis.nodes('master').map((node) => sendBinaryCommandOf(node));
  }
  if (isNodeRedisCluster(redis)) {
    const cluster = redis as unknown as { masters: unknown[]; nodeClient(node: unknown): NodeRedisCommandClient | Promise<NodeRedisCommandClient> };
    return Promise.all(cluster.masters.map(async (node) => sendBinaryCommandOf(await cluster.nodeClient(node))));
  }
  return [sendBinaryCommandOf(redis)];
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function isUtf8(bytes: Buffer): boolean {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Bytes as text: UTF-8 characters where they are, each other byte shown as `\\x..`. */
function decodeBytes(bytes: Buffer): string {
  if (isUtf8(bytes)) return bytes.toString('utf8');
  let text = '';
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const length = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (length > 0 && i + length <= bytes.length && isUtf8(bytes.subarray(i, i + length))) {
      text += bytes.toString('utf8', i, i + length);
      i += length;
    } else {
      text += `\\x${b.toString(16).padStart(2, '0')}`;
      i++;
    }
  }
  return text;
}

interface IoredisCluster extends IoredisCommandClient {
  status: string;
  connect(): Promise<void>;
  once(event: string, listener: () => void): unknown;
  off(event: string, listener: () => void): unknown;
}
/** Until a Cluster client has loaded the slot map, `nodes('master')` lists only the nodes it was given. */
async function clusterReady(cluster: IoredisCluster, timeoutMs = 10_000): Promise<void> {
  if (cluster.status === 'ready') return;
  if (cluster.status === 'wait') void cluster.connect().catch(() => undefined);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`the cluster was not ready within ${timeoutMs} ms`)), timeoutMs);
    const onReady = () => done();
    const onEnd = () => done(new Error('the cluster connection ended'));
    function done(error?: Error) {
      clearTimeout(timer);
      cluster.off('ready', onReady);
      cluster.off('end', onEnd);
      if (error) reject(error);
      else resolve();
    }
    cluster.once('ready', onReady);
    cluster.once('end', onEnd);
  });
}
