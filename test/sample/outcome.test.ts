import { describe, expect, it } from 'vitest';
import { outcomeCodeOf } from '../../src/sample/check-sample.js';
import { releaseOutcome } from '../../src/sample/outcome.js';
import { OUTCOME_CODE } from '../../src/sample/sample.js';

// One clock (ms): the acquire was sent at 0 and answered at 10, with a TTL of 100 — so the TTL may run out
// from 100 (counted from the send) and has run out for certain by 110 (counted from the reply).
const MAY = 100;
const CERTAIN = 110;

describe('releaseOutcome: one rule for the lock and instrument', () => {
  it.each([
    // [reply, sent, replied, outcome, why]
    ['deleted', 50, 51, 'released', 'our token was there'],
    ['deleted', 500, 501, 'released', 'a late release that still found our token (extended, or Redis late to expire) is released'],
    ['gone', 50, 60, 'lost', 'answered before the TTL could have run out: deleted by someone else, or lost by Redis'],
    ['gone', 95, 105, 'expired', 'answered after the TTL may have run out: it may have, so the TTL was too short'],
    ['gone', 200, 201, 'expired', 'long after the TTL: expired'],
    ['failed', 50, 60, 'error', 'no answer while the TTL ran: a Redis failure'],
    ['failed', 105, 200, 'error', 'sent before the TTL had certainly run out: not certain, an error'],
    ['failed', 110, 200, 'expired', 'sent after the TTL had run out for certain: expired while held, whatever Redis did'],
  ] as const)('%s, sent %d, answered %d → %s (%s)', (reply, sent, replied, outcome, _why) => {
    expect(releaseOutcome(reply, sent, replied, MAY, CERTAIN)).toBe(outcome);
  });
});

describe('outcomeCodeOf', () => {
  it('gives OUTCOME_CODE for every outcome, and -1 for anything else (inherited names too)', () => {
    for (const [outcome, code] of Object.entries(OUTCOME_CODE)) {
      expect(outcomeCodeOf(outcome)).toBe(code);
      // The same text built at run time, not the literal.
      expect(outcomeCodeOf([...outcome].join(''))).toBe(code);
    }
    for (const other of ['toString', '__proto__', 'constructor', 'hasOwnProperty', 'Released', '', undefined, null, 0, {}]) expect(outcomeCodeOf(other)).toBe(-1);
  });
});
