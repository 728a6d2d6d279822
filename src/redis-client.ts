import { ConfigError } from './errors.js';

/**
 * Any Redis command, sent as is through whichever client the user has: ioredis
 * (`Redis`, `Cluster`: `call`) or node-redis (`createClient()`: `sendCommand(args)`;
 * `createCluster()`: `sendCommand(firstKey, isReadonly, args)`). Replies come as the
 * client returns them: RESP2 arrays, or RESP3 maps (ioredis 6 flattens them into
 * arrays, node-redis may return `Map`s); {@link pairsOf} and {@link fieldsOf} read both.
 * A leaf module: the package's own types, so neither client's types are needed.
 */

export interface IoredisCommandClient {
  call(command: string, ...args: (string | number)[]): Promise<unknown>;
  callBuffer?(command: string, ...args: (string | Buffer | number)[]): Promise<unknown>;
}

export interface NodeRedisCommandClient {
  sendCommand(args: (string | Buffer)[], options?: { typeMapping?: Record<number, unknown> }): Promise<unknown>;
}

export interface NodeRedisClusterCommandClient {
  sendCommand(
    firstKey: string | Buffer | undefined,
    isReadonly: boolean | undefined,
    args: (string | Buffer)[],
    options?: { typeMapping?: Record<number, unknown> },
  ): Promise<unknown>;
  readonly masters: readonly unknown[];
}

/** A client that can send any command: ioredis `Redis`/`Cluster`, node-redis client/cluster. */
export type RedisCommandClient = IoredisCommandClient | NodeRedisCommandClient | NodeRedisClusterCommandClient;

/** Sends one command; `key` routes it on a Cluster. */
export type SendCommand = (args: readonly (string | number)[], key?: string) => Promise<unknown>;

/** The command sender of a client; a {@link ConfigError} naming what was expected otherwise. */
export function sendCommandOf(client: RedisCommandClient): SendCommand {
  if (client !== null && typeof client === 'object') {
    if (isNodeRedisCluster(client)) {
      return (args, key) => client.sendCommand(key, false, args.map(String));
    }
    // ioredis first: it has a `sendCommand` too, taking a Command object.
    if ('call' in client && typeof client.call === 'function') {
      const c = client as IoredisCommandClient;
      return ([command, ...rest]) => c.call(String(command), ...rest);
    }
    if ('sendCommand' in client && typeof client.sendCommand === 'function') {
      const c = client as NodeRedisCommandClient;
      return (args) => c.sendCommand(args.map(String));
    }
  }
  throw new ConfigError('Expected a Redis client: ioredis `Redis` or `Cluster`, or a node-redis client or cluster');
}

/** Sends one command with arguments that may be bytes; string replies come back as Buffers, byte for byte. */
export type SendBinaryCommand = (args: readonly (string | Buffer | number)[], key?: string | Buffer) => Promise<unknown>;

// node-redis: RESP blob strings ('$') as Buffers.
const BLOBS_AS_BUFFERS = { typeMapping: { 36: Buffer } };

/**
 * The binary-safe command sender of a client: for keys that are not valid
 * UTF-8, which a string round trip would turn into other keys.
 */
export function sendBinaryCommandOf(client: RedisCommandClient): SendBinaryCommand {
  const asArgs = (args: readonly (string | Buffer | number)[]) => args.map((a) => (Buffer.isBuffer(a) ? a : String(a)));
  if (isNodeRedisCluster(client)) return (args, key) => client.sendCommand(key, false, asArgs(args), BLOBS_AS_BUFFERS);
  if ('callBuffer' in client && typeof client.callBuffer === 'function') {
    const c = client as Required<IoredisCommandClient>;
    return ([command, ...rest]) => c.callBuffer(String(command), ...rest);
  }
  if ('sendCommand' in client && typeof client.sendCommand === 'function' && !('call' in client)) {
    const c = client as NodeRedisCommandClient;
    return (args) => c.sendCommand(asArgs(args), BLOBS_AS_BUFFERS);
  }
  throw new ConfigError('Expected a Redis client: ioredis `Redis` or `Cluster`, or a node-redis client or cluster');
}

/** Whether a client is a node-redis cluster (commands need a routing key; masters are listed). */
export function isNodeRedisCluster(client: RedisCommandClient): client is NodeRedisClusterCommandClient {
  return Array.isArray((client as Partial<NodeRedisClusterCommandClient>).masters) && typeof (client as Partial<NodeRedisClusterCommandClient>).sendCommand === 'function';
}

/** Whether a client is an ioredis `Cluster`. */
export function isIoredisCluster(client: unknown): client is { nodes(role: 'master'): IoredisCommandClient[] } {
  return (client as { isCluster?: boolean }).isCluster === true;
}

/**
 * A reply that maps keys to values, as [key, value] pairs: a RESP3 `Map`, a
 * plain object, an array of pairs (RESP2 XREAD), or a flat [k, v, k, v] array
 * (RESP2 field lists, RESP3 maps as ioredis 6 returns them).
 */
export function pairsOf(reply: unknown): [unknown, unknown][] {
  if (reply === null || reply === undefined) return [];
  if (reply instanceof Map) return [...reply.entries()];
  if (Array.isArray(reply)) {
    if (reply.every((item) => Array.isArray(item) && item.length === 2)) return reply as [unknown, unknown][];
    const pairs: [unknown, unknown][] = [];
    for (let i = 0; i + 1 < reply.length; i += 2) pairs.push([reply[i], reply[i + 1]]);
    return pairs;
  }
  if (typeof reply === 'object') return Object.entries(reply);
  return [];
}

/** A reply of named fields (XINFO, for one) as a `Map` from field name to value. */
export function fieldsOf(reply: unknown): Map<string, unknown> {
  return new Map(pairsOf(reply).map(([k, v]) => [String(k), v]));
}
