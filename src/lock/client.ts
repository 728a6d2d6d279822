import type { Redis } from 'ioredis';

/**
 * The Redis commands a lock needs. Both `Redis` and `Cluster` from ioredis fit,
 * as does any client with the same method shapes.
 */
export type LockClient = Pick<Redis, 'set' | 'evalsha' | 'eval'>;

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
