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
    expect(token).toMatch(/^tta1\.[A-Za-z0-9_-]+\.[0-9a-z]+\.[0-9a-f-]{36}$/);
    expect(parseToken(token)).toEqual({ holder: 'api-7:4242', acquiredAtMs: at });
    expect(newToken('x', at)).not.toBe(newToken('x', at));
  });
});
