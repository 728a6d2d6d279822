import { describe, expect, it } from 'vitest';
import { base36, encodeHolder, newToken, parseToken } from '../src/token.js';

describe('lock tokens', () => {
  it('base36 writes what toString(36) writes, for every integer a clock gives and the edges', () => {
    const edges = [0, 1, 35, 36, 36 ** 5 - 1, 36 ** 5, 36 ** 5 + 1, 36 ** 6, 2 ** 31, 2 ** 32, Date.UTC(2026, 11, 4), Number.MAX_SAFE_INTEGER];
    for (const ms of edges) expect(base36(ms), String(ms)).toBe(ms.toString(36));
    const now = Date.now();
    for (let i = 0; i < 100_000; i += 7) expect(base36(now + i * 9973)).toBe((now + i * 9973).toString(36));
  });

  it('a token names its holder and when it was taken, and parses back', () => {
    const at = Date.UTC(2026, 11, 4, 1, 2, 3, 456);
    const token = newToken(encodeHolder('api-7:4242'), at);
    expect(token).toMatch(/^tta1\.[A-Za-z0-9_-]+\.[0-9a-z]+\.[A-Za-z0-9_-]{22}$/);
    expect(parseToken(token)).toEqual({ holder: 'api-7:4242', acquiredAtMs: at });
    expect(newToken('x', at)).not.toBe(newToken('x', at));
    // Same millisecond, another holder; then the next millisecond: each token says its own.
    expect(parseToken(newToken(encodeHolder('worker-2'), at))).toEqual({ holder: 'worker-2', acquiredAtMs: at });
    expect(parseToken(newToken(encodeHolder('worker-2'), at + 1))).toEqual({ holder: 'worker-2', acquiredAtMs: at + 1 });
    expect(parseToken(newToken(encodeHolder('api-7:4242'), at + 1))).toEqual({ holder: 'api-7:4242', acquiredAtMs: at + 1 });
  });

  it('the random part is 132 fresh bits per token, across refills of the random pool', () => {
    // 4,095 random bytes serve 248 tokens: 2,000 tokens refill the pool eight times.
    const parts = Array.from({ length: 2000 }, () => newToken('x', 0).split('.').pop()!);
    expect(new Set(parts).size).toBe(parts.length);
    for (const part of parts) expect(part).toMatch(/^[A-Za-z0-9_-]{22}$/);
    // Every one of the 64 characters about equally often (687.5 each; a standard deviation is about 26).
    const counts = new Map<string, number>();
    for (const c of parts.join('')) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(64);
    for (const [c, n] of counts) expect(Math.abs(n - 687.5), c).toBeLessThan(172);
    // Not a counter or a constant in disguise: about half of all 256,000 bits are set.
    const ones = parts.reduce((sum, part) => sum + [...Buffer.from(part, 'base64url')].reduce((n, byte) => n + popcount(byte), 0), 0);
    expect(Math.abs(ones / (parts.length * 128) - 0.5)).toBeLessThan(0.01);
  });
});

function popcount(byte: number): number {
  let n = 0;
  for (let b = byte; b; b >>= 1) n += b & 1;
  return n;
}
