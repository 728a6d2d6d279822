import { OWN_KEY_PREFIX } from './own-keys.js';
import type { RespConnection } from './resp.js';

/**
 * What `--configure` changed, kept in Redis (database 0 of each node), so that
 * a watcher killed before it could restore `notify-keyspace-events` is undone
 * by the next `--configure` run instead of taken for the user's own setting:
 *
 * - `ttl-advisor:watch:configured` holds the setting from before the first
 *   watcher changed it (written before the change, never overwritten);
 * - `ttl-advisor:watch:watchers`, a sorted set, holds the `--configure`
 *   watchers relying on the change, each scored by the end of a lease (Redis
 *   time, ms) it renews while it runs.
 *
 * A watcher that stops leaves the set; when no one else holds a live lease, it
 * restores the marked setting and deletes the mark. A killed watcher's lease
 * runs out, so the next run to stop restores for it.
 */

export const CONFIGURED_KEY = `${OWN_KEY_PREFIX}configured`;
export const WATCHERS_KEY = `${OWN_KEY_PREFIX}watchers`;

/** The two keys on one node: `tag` places them in a slot it serves ('' outside a Cluster). */
export interface ConfigureMarks {
  readonly configured: string;
  readonly watchers: string;
}

export function configureMarks(tag: string): ConfigureMarks {
  return { configured: `${CONFIGURED_KEY}${tag}`, watchers: `${WATCHERS_KEY}${tag}` };
}

// Lua, so that joining and the last watcher's leaving each see one state: no watcher joins between
// another's count of the live leases and its decision to restore. The time is Redis's, the same for
// watchers on hosts whose clocks disagree.
const NOW = `local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)`;
const JOIN = `${NOW}
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
return { redis.call('GET', KEYS[1]), redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf') - 1 }`;
const LEAVE = `${NOW}
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local others = redis.call('ZCARD', KEYS[2])
if others > 0 then return others end
return redis.call('GET', KEYS[1])`;

/** Joins (or renews the lease of) watcher `id`: the marked setting, if any, and how many others hold a live lease. */
export async function joinMarks(cmd: RespConnection, marks: ConfigureMarks, id: string, leaseMs: number): Promise<{ original: string | undefined; others: number } | Error> {
  const reply = await cmd.send(['EVAL', JOIN, 2, marks.configured, marks.watchers, id, leaseMs]);
  if (reply instanceof Error) return reply;
  const [original, others] = reply as [Buffer | null, number];
  return { original: original?.toString(), others };
}

/** Marks `original` as the setting to restore, unless an earlier watcher marked one (its value came first). */
export async function markOriginal(cmd: RespConnection, marks: ConfigureMarks, original: string): Promise<Error | undefined> {
  const reply = await cmd.send(['SET', marks.configured, original, 'NX']);
  return reply instanceof Error ? reply : undefined;
}

/**
 * Leaves: `{ others }` when other watchers still hold a live lease (the setting stays), else
 * `{ restore }`, the marked setting (`undefined`: none was marked). Delete the mark with
 * {@link clearMark} once it is restored.
 */
export async function leaveMarks(cmd: RespConnection, marks: ConfigureMarks, id: string): Promise<{ others: number } | { restore: string | undefined } | Error> {
  const reply = await cmd.send(['EVAL', LEAVE, 2, marks.configured, marks.watchers, id]);
  if (reply instanceof Error) return reply;
  return typeof reply === 'number' ? { others: reply } : { restore: Buffer.isBuffer(reply) ? reply.toString() : undefined };
}

export async function clearMark(cmd: RespConnection, marks: ConfigureMarks): Promise<void> {
  await cmd.send(['DEL', marks.configured]);
}
