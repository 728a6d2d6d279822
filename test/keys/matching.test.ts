import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { globMatcher } from '../../src/keys/glob.js';
import { compileTemplates } from '../../src/keys/pattern.js';
import { random } from '../../fixtures/generate.js';

/** The regular expressions the matchers replace: the meaning they must keep. */
const templateRegex = (template: string) =>
  new RegExp(`^${template.split(/(\{[^{}]+\})/).map((p, i) => (i % 2 ? '(.+?)' : p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')}$`, 's');
const globRegex = (glob: string) => new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 's');

describe('template and glob matching', () => {
  it('means what the regular expressions meant, on thousands of random cases', () => {
    const next = random(7);
    const pick = (alphabet: string, max: number) =>
      Array.from({ length: Math.floor(next() * max) }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
    for (let i = 0; i < 5000; i++) {
      // One to four placeholders between short literals (possibly empty, so placeholders may touch).
      const pieces = Array.from({ length: 2 + Math.floor(next() * 4) }, () => pick('ab:', 3));
      const template = pieces.join('{x}');
      const key = pick('ab:', 10);
      const [compiled] = compileTemplates([template]);
      expect(compiled!.matches(key), `${template} vs ${key}`).toBe(templateRegex(template).test(key));
      const glob = pick('ab*?', 7);
      expect(globMatcher(glob)(key), `${glob} vs ${key}`).toBe(globRegex(glob).test(key));
    }
  });

  it('takes linear time where the regular expressions backtracked for seconds', () => {
    const [template] = compileTemplates(['lock:{a}:{b}:{c}:end']);
    const hostileKey = 'lock:' + ':'.repeat(4000) + 'x';
    const globs = ['*a*a*a*a*a*a*b', '*?*?*?*?*?*?*!'];
    const text = 'a'.repeat(50_000);
    const started = performance.now();
    expect(template!.matches(hostileKey)).toBe(false);
    for (const glob of globs) expect(globMatcher(glob)(text)).toBe(false);
    // Before: 2.8 s for the template (a 4,000-character key), over 60 s for the glob.
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('does not match templates against keys longer than the cap', () => {
    const [template] = compileTemplates(['order:{id}']);
    expect(template!.matches('order:' + '1'.repeat(100))).toBe(true);
    expect(template!.matches('order:' + '1'.repeat(5000))).toBe(false);
  });
});
