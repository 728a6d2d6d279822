import { describe, expect, it } from 'vitest';
import { MAX_TEMPLATE_KEY_LENGTH, compileTemplates, patternOf, resolvePattern } from '../../src/keys/pattern.js';
import { PatternCache } from '../../src/sample/pattern-cache.js';

/** A cache whose `valueOf` counts its calls: how many keys it really derived. */
function counting(templates: string[] = [], limit?: number) {
  const compiled = compileTemplates(templates);
  const derived: string[] = [];
  const cache = new PatternCache(compiled, (key) => (derived.push(key), resolvePattern(key, compiled)), limit);
  return { cache, derived };
}

describe('PatternCache: the one key → pattern cache', () => {
  it('gives what the heuristics give, for every kind of key', () => {
    const cache = new PatternCache([], (key) => patternOf(key));
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

  it('keeps prefixes apart that differ anywhere', () => {
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

describe('PatternCache: the id-prefix table', () => {
  /** A deterministic generator, so a failure repeats. */
  function lcg(seed: number): () => number {
    let state = seed >>> 0;
    return () => (state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0) / 2 ** 32;
  }

  it('gives what patternOf gives for keys after thousands of prefixes, decimal and UUID ids, through clears', () => {
    const random = lcg(5);
    const letters = 'abcxyz:/_.|-';
    const word = (length: number) => Array.from({ length }, () => letters[Math.floor(random() * letters.length)]).join('');
    const prefixes = Array.from({ length: 3000 }, () => `${word(1 + Math.floor(random() * (random() < 0.1 ? 300 : 20)))}:`);
    for (const limit of [50, 10_000]) {
      const { cache, derived } = counting([], limit);
      for (let i = 0; i < 60_000; i++) {
        const prefix = prefixes[Math.floor(random() ** 2 * prefixes.length)]!;
        const r = random();
        const key = r < 0.2 ? `${prefix}${i.toString(16).padStart(8, '0')}-aaaa-4c1e-9d55-0c6b1f5e2a11` : r < 0.3 ? `${prefix}x${i}y` : `${prefix}${i}`;
        const got = cache.get(key);
        if (got !== patternOf(key)) expect(got, key).toBe(patternOf(key));
      }
      // The prefixes repeat: far fewer derivations than keys, unless the cache is tiny.
      if (limit === 10_000) expect(derived.length).toBeLessThan(15_000);
    }
  });

  it('tells apart prefixes of one length that differ in any one character, beyond the characters it hashes', () => {
    // 40 characters, each prefix differing from the base in one place: more places than the table hashes per length.
    const base = 'abcdefghijklmnopqrstuvwxyzabcdefghijklm:';
    const prefixes = [base];
    for (let at = 0; at < base.length - 1; at++) prefixes.push(`${base.slice(0, at)}Q${base.slice(at + 1)}`);
    const { cache, derived } = counting();
    for (let round = 0; round < 3; round++) {
      for (const [n, p] of prefixes.entries()) expect(cache.get(`${p}${round * 100 + n}`), p).toBe(patternOf(`${p}1`));
    }
    expect(derived).toHaveLength(prefixes.length);
  });

  it('prefixes of one length that hash alike are told apart in the table itself, not left to the map', () => {
    // `servicea:` … `servicet:`: one length, one differing character. Each collision teaches the hash that character.
    const { cache, derived } = counting();
    const names = Array.from({ length: 20 }, (_, i) => String.fromCharCode(97 + i));
    for (let i = 0; i < 2000; i++) expect(cache.get(`service${names[i % 20]}:lock:item:${i}`)).toBe(`service${names[i % 20]}:lock:item:{id}`);
    expect(derived).toHaveLength(20);
    expect((cache as unknown as { byPrefix: Map<string, string> }).byPrefix.size).toBe(0);
  });

  it('with templates, a decimal-id key longer than templates match is cached alone; without, it shares its prefix', () => {
    const prefix = `${'a'.repeat(MAX_TEMPLATE_KEY_LENGTH)}:`;
    const templated = counting(['x:{a}']);
    const plain = counting();
    for (let i = 0; i < 5; i++) {
      expect(templated.cache.get(`${prefix}${i}`)).toBe(patternOf(`${prefix}${i}`));
      expect(plain.cache.get(`${prefix}${i}`)).toBe(patternOf(`${prefix}${i}`));
    }
    expect(templated.derived).toHaveLength(5);
    expect(plain.derived).toHaveLength(1);
  });

  it('keeps a decimal id and a UUID after the same prefix apart', () => {
    const { cache } = counting();
    for (let i = 0; i < 3; i++) {
      expect(cache.get(`cart:lock:${i}`)).toBe('cart:lock:{id}');
      expect(cache.get(`cart:lock:7f1c0e2a-5b7e-4c1e-9d55-0c6b1f5e2a1${i}`)).toBe('cart:lock:{uuid}');
    }
  });

  it('a key given as a concatenation of parts (as template literals make them) is found like the same text in one piece', () => {
    const { cache, derived } = counting();
    const names = ['a', 'b', 'c'];
    for (let i = 0; i < 3000; i++) expect(cache.get(`service${names[i % 3]}:lock:item:${i}`)).toBe(`service${names[i % 3]}:lock:item:{id}`);
    expect(derived).toHaveLength(3);
  });
});
