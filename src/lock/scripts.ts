import { createHash } from 'node:crypto';
import type { LockCommands } from './client.js';

/** A Lua script sent by SHA1 (EVALSHA), falling back to EVAL when the server has not cached it yet. */
export interface LuaScript {
  readonly source: string;
  readonly sha: string;
}

function script(source: string): LuaScript {
  return Object.freeze({ source, sha: createHash('sha1').update(source).digest('hex') });
}

/**
 * Takes the lock and bumps its fencing counter in one step. Atomic, so a holder
 * that lost its lock can never draw a token higher than its successor's.
 * KEYS[1] lock key, KEYS[2] counter key; ARGV[1] token, ARGV[2] ttl ms.
 */
export const ACQUIRE_WITH_FENCE = script(`
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('incr', KEYS[2])
end
return false
`);

/**
 * Compare-and-delete: only the holder of the token may release. A GET then DEL
 * from the client could delete a successor's lock taken in between.
 * Returns 1 when our lock was deleted, 0 when it had expired or belonged to another holder.
 */
export const RELEASE = script(`
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
`);

/** Compare-and-pexpire: extends the TTL only while we still hold the lock. Returns 1 or 0. */
export const EXTEND = script(`
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
`);

/**
 * Runs a script by SHA, loading it with EVAL on NOSCRIPT (after a server restart
 * or SCRIPT FLUSH). No async function: one promise layer less on the lock's path.
 */
export function runScript(redis: LockCommands, lua: LuaScript, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
  return redis.evalsha(lua.sha, keys, args).catch((error: unknown) => {
    if (isNoScript(error)) return redis.eval(lua.source, keys, args);
    throw error;
  });
}

/** {@link runScript} for a script of one key and one or two arguments (the release, the extension): no arrays per call. */
export function runScriptOneKey(redis: LockCommands, lua: LuaScript, key: string, arg: string, arg2?: number): Promise<unknown> {
  return redis.evalshaOneKey(lua.sha, key, arg, arg2).catch((error: unknown) => {
    if (isNoScript(error)) return redis.eval(lua.source, [key], arg2 === undefined ? [arg] : [arg, arg2]);
    throw error;
  });
}

/** Whether Redis answered that it does not have the script cached (after a restart or SCRIPT FLUSH). */
export function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
