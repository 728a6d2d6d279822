import { ConfigError } from '../errors.js';

/**
 * The Redis command a sink needs: XADD, as ioredis (`Redis`, `Cluster`) or
 * node-redis 5 (`createClient()`, `createCluster()`) spells it.
 */
export type StreamClient =
  | { xadd(key: string, ...args: (string | number)[]): Promise<unknown> }
  | {
      xAdd(
        key: string,
        id: string,
        message: Record<string, string>,
        options: { TRIM: { strategy: 'MAXLEN'; strategyModifier: '~'; threshold: number } },
      ): Promise<unknown>;
    };

/** Appends one entry, trimming the stream to about `maxLen`. */
export type AppendCommand = (stream: string, maxLen: number, fields: readonly string[]) => Promise<unknown>;

/** `XADD stream MAXLEN ~ maxLen * field value …` through whichever client was given. */
export function appendCommandOf(redis: StreamClient): AppendCommand {
  if (redis !== null && typeof redis === 'object') {
    if ('xAdd' in redis && typeof redis.xAdd === 'function') {
      return (stream, maxLen, fields) => {
        const message: Record<string, string> = {};
        for (let i = 0; i + 1 < fields.length; i += 2) message[fields[i]!] = fields[i + 1]!;
        return redis.xAdd(stream, '*', message, { TRIM: { strategy: 'MAXLEN', strategyModifier: '~', threshold: maxLen } });
      };
    }
    if ('xadd' in redis && typeof redis.xadd === 'function') {
      return (stream, maxLen, fields) => redis.xadd(stream, 'MAXLEN', '~', maxLen, '*', ...fields);
    }
  }
  throw new ConfigError('Expected a Redis client with `xadd` (ioredis Redis or Cluster) or `xAdd` (node-redis client or cluster)');
}
