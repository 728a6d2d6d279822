import { Buffer } from 'node:buffer';
import type { LeaseLibrary } from '../sample/sample.js';
import { MIN_TOKEN_LENGTH, TOKEN_PREFIX } from '../token.js';
import { bullmqStalledKey } from './bullmq.js';
import { keyAt, keyCount, type MoreKeys } from './key-list.js';
import { kindOfText, scriptOfSha, scriptOfText } from './scripts.js';

/** What a lock command does (see {@link LockCommand}). */
export type LockOp = 'acquire' | 'release' | 'extend' | 'script' | 'bullmq';

/**
 * A command that may take, release or extend a lock, read off its name and
 * arguments as they go to Redis (whichever client sends them):
 * - `acquire`: `SET key token NX PX|EX|PXAT|EXAT ttl`, or a lock library's acquire script (`byScript`);
 * - `release`: a token-checked delete (a release script), or a plain `DEL`/`UNLINK` (`token` undefined);
 * - `extend`: a TTL set on a held lock: an extend script or `SET … XX PX` with the token, or
 *   `PEXPIRE`/`EXPIRE` (`token` undefined); `library` when the script is a lock library's own
 *   (node-redlock's extend, redis-semaphore's refresh);
 * - `script`: a script we do not know, sent by SHA1, whose ARGV is a token (`token`) and perhaps a TTL
 *   (`ttlMs`): a release (the token alone) or an extend when its keys and token match a held lock — the
 *   tracker then makes it one;
 * - `bullmq`: one of BullMQ's worker scripts, which take its job locks out of our sight (see
 *   `bullmq.ts`); `stalledKey` names the queue.
 *
 * One class of one shape for every kind (a field a kind has no use for stays undefined), and, once
 * sent, what the tracker keeps of the command until its reply comes (`sentMs`, `client`, its place
 * among the acquires in flight): a lock command costs one object, and the code reading it one shape.
 *
 * Its first key is a field, and only a command on several keys has a list of the others (`more`): a
 * list per command cost an allocation, and V8 could decide, in some processes and not others, that the
 * lists allocated at that spot outlive a young-generation collection (they live until the reply) and
 * allocate them in the old generation from then on: every instrumented lock cycle then took about
 * 2.1 µs of our CPU instead of 0.9 (`--trace-pretenuring-statistics`: the two spots, one for SET, one
 * for scripts, "tenured" in every slow process and in no fast one).
 */
export class LockCommand {
  /** When it was sent (`performance.now()` ms), and on which server (connection): set by the tracker. */
  sentMs: number | undefined = undefined;
  client: number | undefined = undefined;
  /** Neighbours among the acquires awaiting their reply (see `InFlight`). */
  prev: LockCommand | undefined = undefined;
  next: LockCommand | undefined = undefined;

  constructor(
    public op: LockOp,
    /** The first key (most locks have one). */
    readonly key: string,
    /** The keys after the first, for a command on several (node-redlock on many resources, `DEL a b`); else undefined. */
    readonly more: MoreKeys,
    public token: string | undefined,
    public ttlMs: number | undefined,
    readonly byScript: boolean | undefined,
    readonly library: LeaseLibrary | undefined,
    readonly stalledKey: string | undefined,
  ) {
    this.keyCount = keyCount(more);
  }

  /** How many keys the command names (a field, not a getter: V8 did not inline the getter's call in the tracker). */
  readonly keyCount: number;

  /** Its `i`-th key (0: {@link key}). */
  keyAt(i: number): string {
    return keyAt(this.key, this.more, i);
  }
}

const acquire = (key: string, more: MoreKeys, token: string, ttlMs: number, byScript: boolean) =>
  new LockCommand('acquire', key, more, token, ttlMs, byScript, undefined, undefined);
const release = (key: string, more: MoreKeys, token: string | undefined) => new LockCommand('release', key, more, token, undefined, undefined, undefined, undefined);
const extend = (key: string, more: MoreKeys, token: string | undefined, ttlMs: number, library: LeaseLibrary | undefined) =>
  new LockCommand('extend', key, more, token, ttlMs, undefined, library, undefined);

/** How a command name is read: the commands worth a closer look. Everything else costs a comparison or two. */
export type Verb = 'set' | 'eval' | 'evalsha' | 'expire' | 'pexpire' | 'del' | 'script';

/**
 * The verb of a command name in lower or upper case (as clients send them); `undefined` for the rest.
 * Every command passes here: most are turned away by their name's length or by comparing it with a
 * few constants (names are interned strings, so a comparison is mostly a pointer's), before any lookup.
 */
export function verbOf(name: unknown): Verb | undefined {
  if (typeof name !== 'string') return undefined;
  switch (name.length) {
    case 3:
      return name === 'set' || name === 'SET' ? 'set' : name === 'del' || name === 'DEL' ? 'del' : undefined;
    case 4:
      return name === 'eval' || name === 'EVAL' ? 'eval' : undefined;
    case 6:
      if (name === 'expire' || name === 'EXPIRE') return 'expire';
      if (name === 'unlink' || name === 'UNLINK') return 'del';
      return name === 'script' || name === 'SCRIPT' ? 'script' : undefined;
    case 7:
      if (name === 'evalsha' || name === 'EVALSHA') return 'evalsha';
      return name === 'pexpire' || name === 'PEXPIRE' ? 'pexpire' : undefined;
    default:
      return undefined;
  }
}

/** Whether an argument reads as text (see `text`): what clients send is strings, bytes or numbers. */
const isText = (value: unknown): boolean => typeof value === 'string' || typeof value === 'number' || Buffer.isBuffer(value);

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
const NX = 1;
const XX = 2;
const PX = 3;
const EX = 4;
const PXAT = 5;
const EXAT = 6;

/** A SET option read off its letters (no string made, no lookup); 0 for anything else. */
function setOption(arg: unknown): number {
  const s = typeof arg === 'string' ? arg : text(arg);
  if (s === undefined || (s.length !== 2 && s.length !== 4)) return 0;
  const c0 = s.charCodeAt(0);
  const c1 = s.charCodeAt(1);
  // All upper or all lower case (`Nx` is none), and only letters: `| 32` could make another character read as one.
  const lower = c0 >= 97;
  if (c1 >= 97 !== lower || (c0 | 32) < 97 || (c0 | 32) > 122 || (c1 | 32) !== 120 /* x */) return 0;
  const a = c0 | 32;
  const option = a === 110 /* n */ ? NX : a === 120 /* x */ ? XX : a === 112 /* p */ ? PX : a === 101 /* e */ ? EX : 0;
  if (s.length === 2 || option === 0) return option;
  const c2 = s.charCodeAt(2);
  const c3 = s.charCodeAt(3);
  if ((option !== PX && option !== EX) || c2 >= 97 !== lower || c3 >= 97 !== lower || (c2 | 32) !== 97 /* a */ || (c3 | 32) !== 116 /* t */) return 0;
  return option === PX ? PXAT : EXAT;
}

/**
 * Our own lock's tokens: `RedisLock` records its locks itself, so an instrumented client skips them.
 * Their length is looked at first: a token built by concatenation (`randomUUID()`'s, the `uuid` package's)
 * is a rope until something flattens it, and reading a character of it flattened it here, a copy that cost
 * about 1,100 instructions per lock cycle, a fifth of ours. A UUID (36 characters) or node-redlock's hex
 * (32) is shorter than any of ours, so it is not read.
 */
const ours = (token: string) => token.length >= MIN_TOKEN_LENGTH && token.charCodeAt(0) === 116 /* t */ && token.startsWith(TOKEN_PREFIX);

/**
 * Reads a command (its arguments from `args[from]`, after the name) as a lock
 * operation, or `undefined` when it is not one. `now` is the wall clock, for PXAT/EXAT.
 */
export function readLockCommand(verb: Verb, args: readonly unknown[], now: () => number, from = 0): LockCommand | undefined {
  const n = args.length - from;
  switch (verb) {
    case 'set':
      // `SET key value` and `SET key value EX ttl` (a cache's writes) are turned away before anything is read.
      return n < 5 ? undefined : readSet(args, from, now);
    case 'eval':
    case 'evalsha':
      return readScript(verb, args, from);
    case 'expire':
    case 'pexpire': {
      const key = text(args[from]);
      const ttl = integer(args[from + 1]);
      if (key === undefined || ttl === undefined || n > 3) return undefined;
      return extend(key, undefined, undefined, verb === 'expire' ? ttl * 1000 : ttl, undefined);
    }
    case 'del': {
      const key = n > 0 ? text(args[from]) : undefined;
      if (key === undefined) return undefined;
      let more: string[] | undefined;
      for (let i = from + 1; i < args.length; i++) {
        const other = text(args[i]);
        if (other === undefined) return undefined;
        (more ??= []).push(other);
      }
      return release(key, more, undefined);
    }
    case 'script':
      // SCRIPT LOAD teaches us the script's SHA1 for the EVALSHAs that follow.
      if (String(text(args[from])).toLowerCase() === 'load' && n === 2) {
        const body = text(args[from + 1]);
        if (body !== undefined) kindOfText(body);
      }
      return undefined;
  }
}

function readSet(args: readonly unknown[], from: number, now: () => number): LockCommand | undefined {
  const key = text(args[from]);
  const token = text(args[from + 1]);
  if (key === undefined || token === undefined || ours(token)) return undefined;
  let nx = false;
  let xx = false;
  let ttlMs: number | undefined;
  for (let i = from + 2; i < args.length; i++) {
    const option = setOption(args[i]);
    if (option === 0) return undefined;
    if (option === NX) nx = true;
    else if (option === XX) xx = true;
    else {
      const n = integer(args[++i]);
      if (n === undefined) return undefined;
      ttlMs = option === PX ? n : option === EX ? n * 1000 : (option === PXAT ? n : n * 1000) - now();
    }
  }
  if (ttlMs === undefined || ttlMs <= 0) return undefined;
  if (nx && !xx) return acquire(key, undefined, token, ttlMs, false);
  if (xx && !nx) return extend(key, undefined, token, ttlMs, undefined);
  return undefined;
}

/** An EVAL or EVALSHA (its script at `args[from]`) read as a lock's command; read in place, no copy of `args` made. */
function readScript(verb: 'eval' | 'evalsha', args: readonly unknown[], from: number): LockCommand | undefined {
  const script = text(args[from]);
  const numKeys = integer(args[from + 1]);
  const first = from + 2 + numKeys!; // ARGV[1]
  if (script === undefined || numKeys === undefined || numKeys === 0 || args.length < first + 1) return undefined;
  for (let i = from + 2; i < args.length; i++) if (!isText(args[i])) return undefined;
  const token = text(args[first])!;
  if (ours(token)) return undefined;
  const key = text(args[from + 2])!;
  let more: string[] | undefined;
  if (numKeys > 1) {
    more = [];
    for (let i = from + 3; i < first; i++) more.push(text(args[i])!);
  }
  const known = verb === 'eval' ? scriptOfText(script) : scriptOfSha(script);
  if (known === undefined || known.kind === 'other') {
    const stalledKey = bullmqStalledKey(key, more, args, first);
    if (stalledKey !== undefined) return new LockCommand('bullmq', key, more, undefined, undefined, undefined, undefined, stalledKey);
    if (known !== undefined) return undefined;
    // A script we do not know can be a release (its ARGV the token alone) or an extend (the token and a TTL
    // in ms); anything longer is neither. Read in place: no list of its ARGV is made.
    const argc = args.length - first;
    const ttlMs = argc === 2 ? integer(text(args[first + 1])) : undefined;
    if (argc > 2 || (argc === 2 && ttlMs === undefined)) return undefined;
    return new LockCommand('script', key, more, token, ttlMs, undefined, undefined, undefined);
  }
  switch (known.kind) {
    case 'acquire': {
      const ttlMs = integer(text(args[first + 1]));
      return ttlMs === undefined || ttlMs === 0 ? undefined : acquire(key, more, token, ttlMs, true);
    }
    case 'release':
      return release(key, more, token);
    case 'extend': {
      const ttlMs = integer(text(args[first + 1]));
      return ttlMs === undefined ? undefined : extend(key, more, token, ttlMs, known.library);
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
