import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * The token a lock stores as its key's value: who holds it and since when,
 * so that `ttl-advisor locks` can answer "who holds order:lock:product:42,
 * and for how long", and still unique and unguessable (128 random bits).
 *
 *   tta1.<holder, base64url>.<acquired at, epoch ms in base 36, at least 8 digits>.<128 random bits, base64url>
 *
 * The lock compares the whole token on release and extension, so its format
 * costs nothing in safety; other tools see an opaque string.
 */
export const TOKEN_PREFIX = 'tta1.';

/** The acquire time's least width in a token, in base 36 (zero-padded): an epoch ms has 8 digits from 1972 until 2059, more after. */
const TIME_WIDTH = 8;

/** How a process names itself when not told otherwise: `host:pid`. */
export function defaultInstanceId(): string {
  return `${hostname()}:${process.pid}`;
}

/** The holder part of a token, encoded once per holder (a lock's options). */
export function encodeHolder(holder: string): string {
  return Buffer.from(holder, 'utf8').toString('base64url');
}

/** A new token for a holder (already encoded by {@link encodeHolder}) acquiring at `nowMs`. */
export function newToken(encodedHolder: string, nowMs: number): string {
  // Locks taken in the same millisecond by the same holder share everything but the random part.
  if (nowMs !== headMs || encodedHolder !== headHolder) {
    head = `${TOKEN_PREFIX}${encodedHolder}.${base36(nowMs).padStart(TIME_WIDTH, '0')}.`;
    headMs = nowMs;
    headHolder = encodedHolder;
  }
  return head + randomPart();
}

let head = '';
let headMs = Number.NaN;
let headHolder = '';

// Random bytes drawn about 4 KiB at a time from the CSPRNG, as randomUUID() does, and written as base64url
// in one call: 4,095 bytes (a multiple of three, so no padding) make 5,460 characters of 6 random bits
// each. A token takes 22 of them (132 bits) as a slice of that string: no per-token encoding, and one
// small string per token (randomUUID builds ~0.6 KB of strings per call).
const RANDOM_BYTES = 4095;
const RANDOM_CHARS = 22;
/** No token of ours is shorter (an empty holder): the prefix, two dots, the acquire time and the random part. */
export const MIN_TOKEN_LENGTH = TOKEN_PREFIX.length + 2 + TIME_WIDTH + RANDOM_CHARS;
let randomChars = '';
let randomOffset = 0;

/** 22 random base64url characters (132 bits) from the CSPRNG. */
export function randomPart(): string {
  if (randomOffset + RANDOM_CHARS > randomChars.length) {
    randomChars = randomBytes(RANDOM_BYTES).toString('base64url');
    randomOffset = 0;
  }
  const part = randomChars.slice(randomOffset, randomOffset + RANDOM_CHARS);
  randomOffset += RANDOM_CHARS;
  return part;
}

const BASE36_LOW = 36 ** 5;

/**
 * `ms.toString(36)` for a non-negative integer, from two small integers: V8 takes a slow path
 * for an epoch value (a heap number), ~180 ns, and a fast one for each half, ~45 ns.
 */
export function base36(ms: number): string {
  const high = Math.floor(ms / BASE36_LOW);
  const low = ms - high * BASE36_LOW;
  return high === 0 ? low.toString(36) : high.toString(36) + low.toString(36).padStart(5, '0');
}

/** The holder and acquire time of one of our tokens; `undefined` for any other value. */
export function parseToken(token: string): { holder: string; acquiredAtMs: number } | undefined {
  if (!token.startsWith(TOKEN_PREFIX)) return undefined;
  const parts = token.slice(TOKEN_PREFIX.length).split('.');
  if (parts.length !== 3 || !/^[A-Za-z0-9_-]*$/.test(parts[0]!) || !/^[0-9a-z]{1,11}$/.test(parts[1]!)) return undefined;
  const acquiredAtMs = Number.parseInt(parts[1]!, 36);
  if (!Number.isSafeInteger(acquiredAtMs)) return undefined;
  return { holder: Buffer.from(parts[0]!, 'base64url').toString('utf8'), acquiredAtMs };
}
