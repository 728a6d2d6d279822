import { describe, expect, it } from 'vitest';
import { isPlainValid, outcomeCodeOf, refusalOf } from '../../src/sample/check-sample.js';

const NOW = Date.now();
/** Values for each field, valid and not: the kinds a JavaScript caller can pass. */
const ODD = [undefined, null, 0, -1, 1.5, 2 ** 50, Number.NaN, Number.POSITIVE_INFINITY, '5', true, false, {}, ''];

describe('isPlainValid: the cheap check of record() accepts only what refusalOf accepts', () => {
  it('accepts the common sample (control: else the claim below would hold of a check that accepts nothing)', () => {
    expect(isPlainValid('order:lock:1', outcomeCodeOf('released'), NOW, 12.5, 0, 10_000, 1, 0, undefined, undefined)).toBe(true);
    expect(isPlainValid('order:lock:1', outcomeCodeOf('expired'), NOW, undefined, undefined, 10_000, undefined, undefined, undefined, undefined)).toBe(true);
  });

  it('never accepts a sample that refusalOf refuses, field by field over odd values', () => {
    const base = { key: 'order:lock:1' as unknown, outcome: 'released' as unknown, at: NOW as unknown, holdMs: 1 as unknown, waitMs: 0 as unknown, ttlMs: 1000 as unknown, attempts: 1 as unknown, extensions: 0 as unknown, pattern: undefined as unknown, instance: undefined as unknown };
    let accepted = 0;
    let refused = 0;
    for (const field of Object.keys(base) as (keyof typeof base)[]) {
      for (const value of [...ODD, 'nope', 'lost', NOW + 2 * 86_400_000, 1_700_000_000]) {
        const s = { ...base, [field]: value };
        const plain = isPlainValid(s.key, outcomeCodeOf(s.outcome), s.at, s.holdMs, s.waitMs, s.ttlMs, s.attempts, s.extensions, s.pattern, s.instance);
        const refusal = refusalOf(s.key, s.at, s.holdMs, s.waitMs, s.ttlMs, s.attempts, s.outcome, s.pattern, s.instance, s.extensions);
        if (plain) {
          expect(refusal, `${field} = ${String(value)}`).toBeUndefined();
          accepted++;
        } else if (refusal !== undefined) refused++;
      }
    }
    expect(accepted).toBeGreaterThan(10);
    expect(refused).toBeGreaterThan(50);
  });
});
