import { describe, expect, it } from 'vitest';
import { compileTemplates, patternOf, resolvePattern } from '../../src/keys/pattern.js';
import { PatternCache, patternCache } from '../../src/sample/pattern-cache.js';

/** A cache whose `valueOf` counts its calls: how many keys it really derived. */
function counting(templates: string[] = [], limit?: number) {
  const compiled = compileTemplates(templates);
  const derived: string[] = [];
  const cache = new PatternCache(compiled, (key) => (derived.push(key), resolvePattern(key, compiled)), limit);
  return { cache, derived };
}

describe('PatternCache: the one key → pattern cache', () => {
  it('gives what the heuristics give, for every kind of key', () => {
    const cache = patternCache([]);
    const keys = ['order:lock:product:123', 'cart:lock:7f1c0e2a-5b7e-4c1e-9d55-0c6b1f5e2a11', 'mail:lock:global', 'lock:user42', 'a:1:b:2', '99', ':7', 'x'.repeat(5000) + ':1'];
    for (let round = 0; round < 2; round++) for (const key of keys) expect(cache.get(key), key).toBe(patternOf(key));
  });

  it('derives one pattern for a million ids after one prefix, and churns nothing', () => {
    const { cache, derived } = counting();
    const patterns = new Set<string>();
    for (let i = 0; i < 200_000; i++) patterns.add(cache.get(`order:lock:product:${i}`));
    expect([...patterns]).toEqual(['order:lock:product:{id}']);
    expect(derived).toEqual(['order:lock:product:0']);
    // UUIDs after a prefix too: one derivation, whatever the UUID.
    cache.get('cart:lock:7f1c0e2a-5b7e-4c1e-9d55-0c6b1f5e2a11');
    cache.get('cart:lock:00000000-aaaa-4c1e-9d55-0c6b1f5e2a11');
    expect(derived).toHaveLength(2);
  });

  it('keeps prefixes apart that differ anywhere, also beyond the recent ones compared in place', () => {
    const { cache } = counting();
    const prefixes = Array.from({ length: 40 }, (_, i) => `svc${String.fromCharCode(97 + (i % 26))}:lock:${i % 2 ? 'a' : 'b'}:`);
    for (let round = 0; round < 3; round++) {
      for (const p of prefixes) expect(cache.get(`${p}${round * 1000 + 17}`)).toBe(patternOf(`${p}1`));
    }
    // Same length, one character different, right before the id: not the same prefix.
    expect(cache.get('lock:ab:1')).toBe('lock:ab:{id}');
    expect(cache.get('lock:ac:2')).toBe('lock:ac:{id}');
    expect(cache.get('lock:ab-3')).toBe('lock:ab-{id}');
  });

  it('is bounded: a full map is emptied, and keys are derived again rather than kept', () => {
    const { cache, derived } = counting([], 100);
    for (let i = 0; i < 1000; i++) cache.get(`k${String.fromCharCode(97 + (i % 26))}${i}x`); // no trailing id: one entry per key
    expect(derived).toHaveLength(1000);
    const again = derived.length;
    cache.get('kb1x'); // evicted long ago
    expect(derived.length).toBe(again + 1);
  });

  it('with templates, ids share their prefix only when no template could tell two ids apart', () => {
    // `{productId}` takes the id whatever it is: shared.
    const safe = counting(['order:lock:product:{productId}']);
    for (let i = 1; i < 100; i++) expect(safe.cache.get(`order:lock:product:${i}`)).toBe('order:lock:product:{productId}');
    expect(safe.derived).toHaveLength(1);
    // A template with a literal id: key by key, so product 7 and product 8 keep apart.
    const literal = counting(['order:lock:product:7{rest}']);
    expect(literal.cache.get('order:lock:product:77')).toBe('order:lock:product:7{rest}');
    expect(literal.cache.get('order:lock:product:88')).toBe('order:lock:product:{id}');
    // Two placeholders side by side could split a short id from a long one.
    const adjacent = counting(['job:{a}{b}']);
    expect(adjacent.cache.get('job:1')).toBe('job:{id}');
    expect(adjacent.cache.get('job:12')).toBe('job:{a}{b}');
    // UUIDs are derived key by key under templates (a literal may hold hex letters).
    const uuid = counting(['cart:lock:{id}']);
    uuid.cache.get('cart:lock:7f1c0e2a-5b7e-4c1e-9d55-0c6b1f5e2a11');
    uuid.cache.get('cart:lock:00000000-aaaa-4c1e-9d55-0c6b1f5e2a11');
    expect(uuid.derived).toHaveLength(2);
  });
});
