import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { base36, base64url16, encodeHolder, newToken, parseToken } from '../src/token.js';

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

  it('base64url16 writes what Buffer writes in base64url, at any offset', () => {
    const bytes = randomBytes(4096);
    for (let offset = 0; offset + 16 <= bytes.length; offset += 13) {
      expect(base64url16(bytes, offset)).toBe(bytes.toString('base64url', offset, offset + 16));
    }
    const edges = [Buffer.alloc(16), Buffer.alloc(16, 0xff), Buffer.from([...Array(16).keys()])];
    for (const edge of edges) expect(base64url16(edge, 0)).toBe(edge.toString('base64url'));
  });

  it('the random part is 128 fresh bits per token, across refills of the random pool', () => {
    // 4 KiB of random bytes serve 256 tokens: 2,000 tokens refill the pool seven times.
    const parts = Array.from({ length: 2000 }, () => newToken('x', 0).split('.').pop()!);
    expect(new Set(parts).size).toBe(parts.length);
    for (const part of parts) expect(Buffer.from(part, 'base64url')).toHaveLength(16);
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
