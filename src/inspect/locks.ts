import type { Cluster, Redis } from 'ioredis';
import { patternOf } from '../keys/pattern.js';

/** A lock key held right now. */
export interface LiveLock {
  key: string;
  pattern: string;
  /** The holder's token (the key's value). */
  token: string;
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
 * blocks Redis on a large keyspace), on every master of a Cluster.
 */
export async function listLocks(redis: Redis | Cluster, options: ListLocksOptions = {}): Promise<LiveLocks> {
  const match = options.match ?? '*lock*';
  const count = options.count ?? 1000;
  const limit = options.limit ?? 10_000;
  if (isCluster(redis)) await clusterReady(redis);
  const nodes = isCluster(redis) ? redis.nodes('master') : [redis];
  const locks: LiveLock[] = [];
  let scanned = 0;
  let omitted = 0;
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', count);
      cursor = next;
      scanned += keys.length;
      if (keys.length === 0) continue;
      const pipeline = node.pipeline();
      for (const key of keys) pipeline.type(key).get(key).pttl(key);
      const replies = (await pipeline.exec()) ?? [];
      keys.forEach((key, i) => {
        const [type, value, pttl] = [replies[3 * i], replies[3 * i + 1], replies[3 * i + 2]];
        // A lock is a string with an expiry; a GET on another type fails, which is fine.
        if (type?.[1] !== 'string' || typeof value?.[1] !== 'string' || typeof pttl?.[1] !== 'number' || pttl[1] <= 0) return;
        if (locks.length >= limit) {
          omitted++;
          return;
        }
        locks.push({ key, pattern: patternOf(key), token: value[1], remainingMs: pttl[1] });
      });
    } while (cursor !== '0');
  }
  locks.sort((a, b) => a.remainingMs - b.remainingMs || (a.key < b.key ? -1 : 1));
  return { locks, scanned, omitted };
}

function isCluster(redis: Redis | Cluster): redis is Cluster {
  return (redis as { isCluster?: boolean }).isCluster === true;
}

/** Until a Cluster client has loaded the slot map, `nodes('master')` lists only the nodes it was given. */
async function clusterReady(cluster: Cluster, timeoutMs = 10_000): Promise<void> {
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
