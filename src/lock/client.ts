import { ConfigError } from '../errors.js';

/**
 * The Redis commands a lock needs, as ioredis spells them: `Redis` and
 * `Cluster` from ioredis 5 and 6 fit, as does any client with these methods.
 */
export interface IoredisLockClient {
  set(key: string, value: string, pxToken: 'PX', ttlMs: number, nxToken: 'NX'): Promise<unknown>;
  evalsha(sha1: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
}

/** The same commands as node-redis 5 spells them: a `createClient()` or `createCluster()` client fits. */
export interface NodeRedisLockClient {
  set(key: string, value: string, options: { expiration: { type: 'PX'; value: number }; condition: 'NX' }): Promise<unknown>;
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/**
 * A Redis client a lock can use: ioredis (`Redis`, `Cluster`) or node-redis
 * (`createClient()`, `createCluster()`), told apart by their method names. The
 * types are the package's own, so they need neither client's types installed.
 */
export type LockClient = IoredisLockClient | NodeRedisLockClient;

/** What a lock sends, whichever client carries it. */
export interface LockCommands {
  /** `SET key token NX PX ttlMs`: `'OK'` when won, `null` when another holder has the key. */
  setNxPx(key: string, token: string, ttlMs: number): Promise<unknown>;
  evalsha(sha1: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
  eval(script: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
  /** `EVALSHA sha1 1 key arg [arg2]`: the release and the extension, without arrays to build and spread per lock. */
  evalshaOneKey(sha1: string, key: string, arg: string, arg2?: number): Promise<unknown>;
}

// One adapter per client, made on first use: the lock's hot path then costs one extra call per command.
const adapters = new WeakMap<object, LockCommands>();
// The client of the last lock, whose adapter needs no WeakMap lookup: a service mostly locks through one client.
let lastClient: object | undefined;
let lastAdapter: LockCommands | undefined;

/** The commands of a client; a {@link ConfigError} when it is neither an ioredis nor a node-redis client. */
export function lockCommandsOf(client: LockClient): LockCommands {
  if (client === lastClient) return lastAdapter!;
  if (client === null || typeof client !== 'object') {
    throw new ConfigError(`Expected a Redis client (ioredis Redis or Cluster, node-redis client or cluster), got \`${String(client)}\``);
  }
  let adapter = adapters.get(client);
  if (!adapter) {
    adapter = isNodeRedis(client) ? nodeRedisCommands(client) : isIoredis(client) ? ioredisCommands(client) : undefined;
    if (!adapter) {
      throw new ConfigError('Expected a Redis client with `set` and `evalsha`/`eval` (ioredis) or `evalSha`/`eval` (node-redis)');
    }
    adapters.set(client, adapter);
  }
  lastClient = client;
  lastAdapter = adapter;
  return adapter;
}

function isNodeRedis(client: LockClient): client is NodeRedisLockClient {
  return typeof (client as Partial<NodeRedisLockClient>).evalSha === 'function' && typeof client.set === 'function' && typeof client.eval === 'function';
}

function isIoredis(client: LockClient): client is IoredisLockClient {
  return typeof (client as Partial<IoredisLockClient>).evalsha === 'function' && typeof client.set === 'function' && typeof client.eval === 'function';
}

function ioredisCommands(client: IoredisLockClient): LockCommands {
  return {
    setNxPx: (key, token, ttlMs) => client.set(key, token, 'PX', ttlMs, 'NX'),
    evalsha: (sha1, keys, args) => client.evalsha(sha1, keys.length, ...keys, ...args),
    eval: (script, keys, args) => client.eval(script, keys.length, ...keys, ...args),
    evalshaOneKey: (sha1, key, arg, arg2) => (arg2 === undefined ? client.evalsha(sha1, 1, key, arg) : client.evalsha(sha1, 1, key, arg, arg2)),
  };
}

function nodeRedisCommands(client: NodeRedisLockClient): LockCommands {
  const options = (keys: readonly string[], args: readonly (string | number)[]) => ({ keys: [...keys], arguments: args.map(String) });
  return {
    setNxPx: (key, token, ttlMs) => client.set(key, token, { expiration: { type: 'PX', value: ttlMs }, condition: 'NX' }),
    evalsha: (sha1, keys, args) => client.evalSha(sha1, options(keys, args)),
    eval: (script, keys, args) => client.eval(script, options(keys, args)),
    evalshaOneKey: (sha1, key, arg, arg2) => client.evalSha(sha1, { keys: [key], arguments: arg2 === undefined ? [arg] : [arg, String(arg2)] }),
  };
}

/**
 * The Redis key holding a lock's fencing counter. It must live in the lock key's
 * hash slot so one script can touch both on a Cluster: a key that already has a
 * hash tag keeps it; otherwise the whole lock key becomes the tag.
 */
export function fenceKeyOf(key: string): string {
  const open = key.indexOf('{');
  if (open !== -1) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) return `${key}:fence`;
  }
  return key.includes('}') ? `${key}:fence` : `{${key}}:fence`;
}
