import type { LeaseLibrary } from '../sample/sample.js';
import { TOKEN_PREFIX } from '../token.js';
import { bullmqStalledKey } from './bullmq.js';
import { kindOfText, scriptOfSha, scriptOfText } from './scripts.js';

/**
 * A command that may take, release or extend a lock, read off its name and
 * arguments as they go to Redis (whichever client sends them).
 */
export type LockCommand =
  /** `SET key token NX PX|EX|PXAT|EXAT ttl`, or a lock library's acquire script. */
  | { op: 'acquire'; keys: readonly string[]; token: string; ttlMs: number; byScript: boolean }
  /** A token-checked delete (a release script), or a plain `DEL`/`UNLINK` (`token` undefined). */
  | { op: 'release'; keys: readonly string[]; token: string | undefined }
  /**
   * A TTL set on a held lock: an extend script or `SET … XX PX` with the token, or `PEXPIRE`/`EXPIRE` (`token` undefined);
   * `library` when the script is a lock library's own (node-redlock's extend, redis-semaphore's refresh).
   */
  | { op: 'extend'; keys: readonly string[]; token: string | undefined; ttlMs: number; library: LeaseLibrary | undefined }
  /** A script we do not know, sent by SHA1: a release or extend when its keys and ARGV[1] match a held lock. */
  | { op: 'script'; keys: readonly string[]; argv: readonly string[] }
  /** One of BullMQ's worker scripts, which take its job locks out of our sight (see `bullmq.ts`); `stalledKey` names the queue. */
  | { op: 'bullmq'; stalledKey: string };

/** How a command name is read: the commands worth a closer look. Everything else costs one lookup. */
export type Verb = 'set' | 'eval' | 'evalsha' | 'expire' | 'pexpire' | 'del' | 'script';

const VERBS: Record<string, Verb> = Object.assign(Object.create(null) as Record<string, Verb>, {
  set: 'set',
  eval: 'eval',
  evalsha: 'evalsha',
  expire: 'expire',
  pexpire: 'pexpire',
  del: 'del',
  unlink: 'del',
  script: 'script',
});
for (const name of Object.keys(VERBS)) VERBS[name.toUpperCase()] = VERBS[name]!;

/** The verb of a command name in lower or upper case (as clients send them); `undefined` for the rest. */
export function verbOf(name: unknown): Verb | undefined {
  return typeof name === 'string' ? VERBS[name] : undefined;
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : typeof value === 'number' ? String(value) : undefined;

/** A non-negative integer argument (a TTL, a key count), as a number or its decimal digits; else `undefined`. */
function integer(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  const s = typeof value === 'string' ? value : text(value);
  if (s === undefined || s.length === 0 || s.length > 15) return undefined;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const digit = s.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    n = n * 10 + digit;
  }
  return n;
}

/** The options of SET a lock uses, in either case; anything else (GET, KEEPTTL, IFEQ…) is not the lock protocol. */
type SetOption = 'NX' | 'XX' | 'PX' | 'EX' | 'PXAT' | 'EXAT';
const SET_OPTIONS: Record<string, SetOption> = Object.create(null) as Record<string, SetOption>;
for (const option of ['NX', 'XX', 'PX', 'EX', 'PXAT', 'EXAT'] as const) {
  SET_OPTIONS[option] = option;
  SET_OPTIONS[option.toLowerCase()] = option;
}

/** Our own lock's tokens: `RedisLock` records its locks itself, so an instrumented client skips them. */
const ours = (token: string) => token.charCodeAt(0) === 116 /* t */ && token.startsWith(TOKEN_PREFIX);

/**
 * Reads a command (its arguments after the name) as a lock operation, or
 * `undefined` when it is not one. `now` is the wall clock, for PXAT/EXAT.
 */
export function readLockCommand(verb: Verb, args: readonly unknown[], now: () => number): LockCommand | undefined {
  switch (verb) {
    case 'set':
      return readSet(args, now);
    case 'eval':
    case 'evalsha':
      return readScript(verb, args);
    case 'expire':
    case 'pexpire': {
      const key = text(args[0]);
      const n = integer(args[1]);
      if (key === undefined || n === undefined || args.length > 3) return undefined;
      return { op: 'extend', keys: [key], token: undefined, ttlMs: verb === 'expire' ? n * 1000 : n, library: undefined };
    }
    case 'del': {
      const keys = args.map(text);
      return keys.every((k): k is string => k !== undefined) && keys.length > 0 ? { op: 'release', keys, token: undefined } : undefined;
    }
    case 'script':
      // SCRIPT LOAD teaches us the script's SHA1 for the EVALSHAs that follow.
      if (String(text(args[0])).toLowerCase() === 'load' && args.length === 2) {
        const body = text(args[1]);
        if (body !== undefined) kindOfText(body);
      }
      return undefined;
  }
}

function readSet(args: readonly unknown[], now: () => number): LockCommand | undefined {
  if (args.length < 4) return undefined;
  const key = text(args[0]);
  const token = text(args[1]);
  if (key === undefined || token === undefined || ours(token)) return undefined;
  let nx = false;
  let xx = false;
  let ttlMs: number | undefined;
  for (let i = 2; i < args.length; i++) {
    const arg = args[i];
    const option = SET_OPTIONS[typeof arg === 'string' ? arg : String(text(arg))];
    if (option === undefined) return undefined;
    if (option === 'NX') nx = true;
    else if (option === 'XX') xx = true;
    else {
      const n = integer(args[++i]);
      if (n === undefined) return undefined;
      ttlMs = option === 'PX' ? n : option === 'EX' ? n * 1000 : (option === 'PXAT' ? n : n * 1000) - now();
    }
  }
  if (ttlMs === undefined || ttlMs <= 0) return undefined;
  if (nx && !xx) return { op: 'acquire', keys: [key], token, ttlMs, byScript: false };
  if (xx && !nx) return { op: 'extend', keys: [key], token, ttlMs, library: undefined };
  return undefined;
}

function readScript(verb: 'eval' | 'evalsha', args: readonly unknown[]): LockCommand | undefined {
  const script = text(args[0]);
  const numKeys = integer(args[1]);
  if (script === undefined || numKeys === undefined || numKeys === 0 || args.length < 2 + numKeys + 1) return undefined;
  const keys: string[] = [];
  for (let i = 2; i < 2 + numKeys; i++) {
    const key = text(args[i]);
    if (key === undefined) return undefined;
    keys.push(key);
  }
  const argv: string[] = [];
  for (let i = 2 + numKeys; i < args.length; i++) {
    const arg = text(args[i]);
    if (arg === undefined) return undefined;
    argv.push(arg);
  }
  const token = argv[0]!;
  if (ours(token)) return undefined;
  const known = verb === 'eval' ? scriptOfText(script) : scriptOfSha(script);
  if (known === undefined || known.kind === 'other') {
    const stalledKey = bullmqStalledKey(keys, argv);
    if (stalledKey !== undefined) return { op: 'bullmq', stalledKey };
    return known === undefined ? { op: 'script', keys, argv } : undefined;
  }
  switch (known.kind) {
    case 'acquire': {
      const ttlMs = integer(argv[1]);
      return ttlMs === undefined || ttlMs === 0 ? undefined : { op: 'acquire', keys, token, ttlMs, byScript: true };
    }
    case 'release':
      return { op: 'release', keys, token };
    case 'extend': {
      const ttlMs = integer(argv[1]);
      return ttlMs === undefined ? undefined : { op: 'extend', keys, token, ttlMs, library: known.library };
    }
  }
}

/** Whether a reply says the operation took effect on all `n` keys: `OK`, or a count of `n` (or 1 for one-key scripts). */
export function succeeded(reply: unknown, n: number): boolean {
  if (typeof reply === 'number') return reply >= (n > 1 ? n : 1);
  if (reply === 'OK') return true;
  // ioredis hands its reply hooks the raw bytes: read `OK` without making a string.
  if (Buffer.isBuffer(reply) && reply.length === 2 && reply[0] === 0x4f && reply[1] === 0x4b) return true;
  if (reply === null || reply === undefined) return false;
  const s = text(reply);
  if (s === 'OK') return true;
  const count = Number(s);
  return Number.isInteger(count) && count >= (n > 1 ? n : 1);
}
