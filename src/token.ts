import { randomFillSync } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * The token a lock stores as its key's value: who holds it and since when,
 * so that `ttl-advisor locks` can answer "who holds order:lock:product:42,
 * and for how long", and still unique and unguessable (128 random bits).
 *
 *   tta1.<holder, base64url>.<acquired at, epoch ms in base 36>.<128 random bits, base64url>
 *
 * The lock compares the whole token on release and extension, so its format
 * costs nothing in safety; other tools see an opaque string.
 */
export const TOKEN_PREFIX = 'tta1.';

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
    head = `${TOKEN_PREFIX}${encodedHolder}.${base36(nowMs)}.`;
    headMs = nowMs;
    headHolder = encodedHolder;
  }
  return head + randomPart();
}

let head = '';
let headMs = Number.NaN;
let headHolder = '';

// Random bytes drawn 4 KiB at a time from the CSPRNG, as randomUUID() does; 16 per token, written
// as 22 base64url characters: one string per token (randomUUID builds ~0.6 KB of strings per call).
const RANDOM_POOL = new Uint8Array(4096);
let randomOffset = RANDOM_POOL.length;
const BASE64URL = Uint8Array.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', (c) => c.charCodeAt(0));

function randomPart(): string {
  if (randomOffset + 16 > RANDOM_POOL.length) {
    randomFillSync(RANDOM_POOL);
    randomOffset = 0;
  }
  const part = base64url16(RANDOM_POOL, randomOffset);
  randomOffset += 16;
  return part;
}

/**
 * `Buffer.toString('base64url')` of the 16 bytes at `offset`, in one string built from its character
 * codes: half the CPU of the Buffer call, which crosses into C++ for 22 characters.
 */
export function base64url16(bytes: Uint8Array, offset: number): string {
  const b = bytes;
  const o = offset;
  const C = BASE64URL;
  // Five groups of three bytes (24 bits, four characters), then the last byte (two characters, no padding).
  const g0 = (b[o]! << 16) | (b[o + 1]! << 8) | b[o + 2]!;
  const g1 = (b[o + 3]! << 16) | (b[o + 4]! << 8) | b[o + 5]!;
  const g2 = (b[o + 6]! << 16) | (b[o + 7]! << 8) | b[o + 8]!;
  const g3 = (b[o + 9]! << 16) | (b[o + 10]! << 8) | b[o + 11]!;
  const g4 = (b[o + 12]! << 16) | (b[o + 13]! << 8) | b[o + 14]!;
  const last = b[o + 15]!;
  return String.fromCharCode(
    C[g0 >> 18]!, C[(g0 >> 12) & 63]!, C[(g0 >> 6) & 63]!, C[g0 & 63]!,
    C[g1 >> 18]!, C[(g1 >> 12) & 63]!, C[(g1 >> 6) & 63]!, C[g1 & 63]!,
    C[g2 >> 18]!, C[(g2 >> 12) & 63]!, C[(g2 >> 6) & 63]!, C[g2 & 63]!,
    C[g3 >> 18]!, C[(g3 >> 12) & 63]!, C[(g3 >> 6) & 63]!, C[g3 & 63]!,
    C[g4 >> 18]!, C[(g4 >> 12) & 63]!, C[(g4 >> 6) & 63]!, C[g4 & 63]!,
    C[last >> 2]!, C[(last & 3) << 4]!,
  );
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
