import { createHash } from 'node:crypto';
import type { LeaseLibrary } from '../sample/sample.js';
import { readLua } from './lua.js';

/**
 * What a Lua script does to a lock, by the protocol every library here shares:
 * KEYS are the lock keys, ARGV[1] the holder's token, ARGV[2] (acquire, extend)
 * the TTL in milliseconds.
 * - `acquire`: creates the keys with the token and a TTL when none exists (reply: keys set).
 * - `release`: deletes the keys that still hold the token (reply: keys deleted).
 * - `extend`: sets a new TTL on the keys that still hold the token (reply: > 0 when done).
 * - `other`: anything else; never a lock operation by itself.
 */
export type ScriptKind = 'acquire' | 'release' | 'extend' | 'other';

/** A script's kind and, for a lock library's own script, whose it is (a renewal is advised in its library's words). */
export interface ScriptInfo {
  readonly kind: ScriptKind;
  readonly library: LeaseLibrary | undefined;
}

/** One shared, frozen info per kind and library: looking a script up allocates nothing. */
const info = (kind: ScriptKind, library?: LeaseLibrary): ScriptInfo => Object.freeze({ kind, library });
const BY_KIND: Readonly<Record<ScriptKind, ScriptInfo>> = Object.freeze({ acquire: info('acquire'), release: info('release'), extend: info('extend'), other: info('other') });
const REDLOCK_EXTEND = info('extend', 'redlock');
const SEMAPHORE_EXTEND = info('extend', 'redis-semaphore');

/**
 * The scripts of the lock libraries users have, by the SHA1 their EVALSHA
 * sends (a service whose Redis already caches a script never sends its text).
 * Each entry is checked against the library itself in the tests.
 */
const KNOWN: ReadonlyMap<string, ScriptInfo> = new Map<string, ScriptInfo>([
  // node-redlock 5.0.0-beta.2 (Redlock#acquire/extend/release; using() renews by the extend script)
  ['96da70f7716f27d278a5218544df37fd8b0a5e4c', BY_KIND.acquire],
  ['aed6f382e410db8ba7926d4e5e9aab410bf2a78a', REDLOCK_EXTEND],
  ['e4612211c9f8f51c257e26e056b0a654b3187242', BY_KIND.release],
  // node-redlock 4.2.0 (lock/unlock/extend, callbacks or promises)
  ['e5a322e2634ef59a516e8ea150cb085afafee684', BY_KIND.acquire],
  ['ce46f80993d5dac20dd066eb301a4e37994bdbed', REDLOCK_EXTEND],
  ['0f0f23b9048b36752b5be114f357ba083449f908', BY_KIND.release],
  // redis-semaphore 5 Mutex (delIfEqual, expireIfEqual: its refresh); it acquires with SET NX PX
  ['7157921a7cc7cfba979acf6d63f073151df17d12', BY_KIND.release],
  ['594683e49a64ebaf975caf5f8079a1d097c438f1', SEMAPHORE_EXTEND],
]);

export function sha1(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex');
}

/**
 * Scripts learnt while running (EVAL texts, SCRIPT LOAD). Bounded in bytes, not
 * only in count — a service sending 1 MB scripts must not make us keep them:
 * by SHA1, only the 40-character hash and the kind; by text (so that a short
 * script EVAL'd on every release is not hashed each time), only texts up to
 * `MAX_TEXT_BYTES`, `TEXT_CACHE_BYTES` in all. A longer script is hashed on each
 * EVAL (linear, and cheaper than Redis compiling it) and read once. Full caches
 * stop learning; they never grow.
 */
const MAX_LEARNT = 1000;
const MAX_TEXT_BYTES = 4096;
const TEXT_CACHE_BYTES = 256 * 1024;
const bySha = new Map<string, ScriptInfo>();
const byText = new Map<string, ScriptInfo>();
let textBytes = 0;
/** The last SHA1 found in neither map: a script of the service's own, sent on every lock, is not looked for twice. Reset when one is learnt. */
let lastUnknownSha: string | undefined;

/**
 * The last two SHA1s found, and their scripts: a lock library sends its acquire and its release in
 * turn, and a comparison with each (the same string, mostly) is cheaper than a map lookup. Never
 * stale: what a SHA1 was found to be stays so (neither map forgets, nor changes a script's kind).
 */
let recentSha: string | undefined;
let recentScript: ScriptInfo | undefined;
let olderSha: string | undefined;
let olderScript: ScriptInfo | undefined;

/** A script sent by SHA1; `undefined` when neither known nor seen as text. */
export function scriptOfSha(sha: string): ScriptInfo | undefined {
  if (sha === recentSha) return recentScript;
  if (sha === olderSha) return olderScript;
  return sha === lastUnknownSha ? undefined : lookUpSha(sha);
}

/** Apart from {@link scriptOfSha}, so that the common case stays small enough to be inlined where a command is read. */
function lookUpSha(sha: string): ScriptInfo | undefined {
  // Learnt SHA1s are kept in lower case, as clients send them: an upper-case one is lowered only when not found as it is.
  const script = KNOWN.get(sha) ?? bySha.get(sha) ?? (sha.length === 40 ? bySha.get(sha.toLowerCase()) : undefined);
  if (script === undefined) lastUnknownSha = sha;
  else {
    olderSha = recentSha;
    olderScript = recentScript;
    recentSha = sha;
    recentScript = script;
  }
  return script;
}

/** The kind of a script sent by SHA1; `undefined` when neither known nor seen as text. */
export function kindOfSha(sha: string): ScriptKind | undefined {
  return scriptOfSha(sha)?.kind;
}

/** The kind of a script sent as text (EVAL, SCRIPT LOAD); remembers its SHA1 for later EVALSHAs. */
export function kindOfText(text: string): ScriptKind {
  return scriptOfText(text).kind;
}

/** A script sent as text (EVAL, SCRIPT LOAD): a library's own by its SHA1, else read; remembered for later EVALSHAs. */
export function scriptOfText(text: string): ScriptInfo {
  const cached = byText.get(text);
  if (cached !== undefined) return cached;
  const sha = sha1(text);
  const known = KNOWN.get(sha) ?? bySha.get(sha);
  const script = known ?? BY_KIND[classify(text)];
  if (known === undefined && bySha.size < MAX_LEARNT) {
    bySha.set(sha, script);
    lastUnknownSha = undefined;
  }
  // UTF-8 bytes: at least what V8 keeps for the text, in either of its string encodings.
  const bytes = text.length <= MAX_TEXT_BYTES ? Buffer.byteLength(text, 'utf8') : Infinity;
  if (bytes <= MAX_TEXT_BYTES && textBytes + bytes <= TEXT_CACHE_BYTES) {
    // A copy (UTF-16: exact, lone surrogates too): the text may be a slice of a far larger string, which a Map key would keep alive.
    byText.set(Buffer.from(text, 'utf16le').toString('utf16le'), script);
    textBytes += bytes;
  }
  return script;
}

/** What the script caches hold now (the tests read it: the bound is in bytes). */
export function scriptCacheSize(): { shas: number; texts: number; textBytes: number } {
  return { shas: bySha.size, texts: byText.size, textBytes };
}

/**
 * Reads a script's code (never its string literals or comments, see `readLua`).
 * Deliberately narrow: a script counts as a lock operation only when it does
 * what a lock does with KEYS and ARGV[1] —
 *  release: compares a key's value with ARGV[1] (`get` … `== ARGV[1]`) and deletes (`del`/`unlink`);
 *  extend:  compares the same way and sets a TTL (`pexpire`/`expire`, or `set` with `px`/`ex`);
 *  acquire: sets a key to ARGV[1] with a TTL, only when absent (`nx`, or an `exists` check first), with no comparison.
 */
export function classify(text: string): ScriptKind {
  const { calls, readsArgv1, compares, setsWithTtl, nx } = readLua(text);
  const comparesToken = calls.has('get') && compares && readsArgv1;
  const deletes = calls.has('del') || calls.has('unlink');
  if (comparesToken && deletes) return 'release';
  if (comparesToken && (calls.has('pexpire') || calls.has('expire') || setsWithTtl)) return 'extend';
  const onlyWhenAbsent = nx || calls.has('exists');
  if (!comparesToken && setsWithTtl && onlyWhenAbsent && !deletes) return 'acquire';
  return 'other';
}
