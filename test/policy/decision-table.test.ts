import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkPolicy } from '../../src/policy/check.js';
import { applyRecommendations } from '../../src/policy/apply.js';
import { TtlPolicy, type PolicyEntry } from '../../src/policy/policy.js';
import { analysisOf, patternAnalysis, type PatternFacts } from '../helpers/analysis.js';

/**
 * The decision table (docs/policy.md, every case; README shows its main rows), row by row, against the code: each row's first cell
 * names a case, and the case's `check` result and `apply` step must be what
 * the row says. A row changed in one place and not the other fails here.
 * (p99 1 s: the recommendation is 3 s.)
 */

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
/** The whole table lives in docs/policy.md (#every-case); README shows its main rows. */
const POLICY_DOC = readFileSync(new URL('../../docs/policy.md', import.meta.url), 'utf8');
const HOUR = 3_600_000;

interface Row {
  /** The row's first cell, exactly as the table has it. */
  says: string;
  cases: { entry: PolicyEntry; facts?: PatternFacts; strict?: boolean; check: 'fails' | 'warns' | 'passes'; apply: 'raises' | 'lowers' | 'nothing' }[];
}

const ROWS: Row[] = [
  { says: 'locks expired that the recommendation would have saved', cases: [{ entry: { ttlMs: 2000 }, facts: { expired: 1, expiredHoldsMs: [2500] }, check: 'fails', apply: 'raises' }] },
  {
    says: "too short: under 3 × p99 (or p99's upper bound), by `--min-change` (10 %) or more",
    cases: [{ entry: { ttlMs: 2000 }, check: 'fails', apply: 'raises' }],
  },
  {
    says: 'too long: over 3 × the recommendation',
    cases: [
      { entry: { ttlMs: 10_000 }, check: 'warns', apply: 'lowers' },
      { entry: { ttlMs: 10_000 }, strict: true, check: 'fails', apply: 'lowers' },
    ],
  },
  // 5 s over a 3 s recommendation: not too long, and a move apply makes (check passes: it is not needed).
  { says: 'over the recommendation, under 3 × it, by `--min-change` or more', cases: [{ entry: { ttlMs: 5000 }, check: 'passes', apply: 'lowers' }] },
  { says: 'under the 3 s floor, though it covers the data, by `--min-change` or more', cases: [{ entry: { ttlMs: 1000 }, facts: { p99Ms: 10 }, check: 'warns', apply: 'raises' }] },
  {
    says: 'holds beyond the recommendation (the tail, hung holders)',
    cases: [
      { entry: { ttlMs: 3000 }, facts: { maxMs: 6000, expired: 1, expiredHoldsMs: [6000] }, check: 'warns', apply: 'nothing' },
      { entry: { ttlMs: 3000 }, facts: { maxMs: 6000 }, check: 'passes', apply: 'nothing' },
    ],
  },
  {
    says: 'expirations whose end was not seen (censored)',
    cases: [
      { entry: { ttlMs: 2000 }, facts: { expired: 1, censored: 1 }, check: 'fails', apply: 'raises' },
      { entry: { ttlMs: 3000 }, facts: { expired: 1, censored: 1 }, check: 'warns', apply: 'nothing' },
    ],
  },
  { says: 'a move under `--min-change`', cases: [{ entry: { ttlMs: 2900 }, check: 'passes', apply: 'nothing' }] },
  {
    says: 'pinned, under 299 hold times, or under `--min-window` (24 h) of data',
    cases: [
      { entry: { ttlMs: 2000, pinned: true }, check: 'warns', apply: 'nothing' },
      { entry: { ttlMs: 2000, pinned: true }, facts: { expired: 1, expiredHoldsMs: [2500] }, check: 'fails', apply: 'nothing' },
      { entry: { ttlMs: 2000 }, facts: { holdCount: 100 }, check: 'warns', apply: 'nothing' },
      { entry: { ttlMs: 2000 }, facts: { holdCount: 100, expired: 1, expiredHoldsMs: [2500] }, check: 'fails', apply: 'nothing' },
      { entry: { ttlMs: 2000 }, facts: { spanMs: HOUR }, check: 'warns', apply: 'nothing' },
    ],
  },
  {
    says: 'a lease (renewed while held): a renewal left under 20 % of the TTL (or half its on-time margin), or a lease ran out',
    cases: [
      { entry: { ttlMs: 1000 }, facts: { currentTtlMs: 1000, lease: { atRisk: 3, ranOut: 1, minMarginMs: 0 } }, check: 'fails', apply: 'raises' },
      // The lateness rule needs no more than the TTL: the late renewals are the far tail, a look.
      { entry: { ttlMs: 3000 }, facts: { currentTtlMs: 3000, lease: { atRisk: 1, minMarginMs: 400 } }, check: 'warns', apply: 'nothing' },
    ],
  },
  {
    says: 'a lease over 3 × what renewal lateness needs',
    cases: [
      { entry: { ttlMs: 30_000 }, facts: { currentTtlMs: 30_000, lease: {} }, check: 'warns', apply: 'lowers' },
      { entry: { ttlMs: 30_000 }, facts: { currentTtlMs: 30_000, lease: {} }, strict: true, check: 'fails', apply: 'lowers' },
    ],
  },
  {
    says: 'a lease renewing in time, however long its holds',
    cases: [
      { entry: { ttlMs: 1000 }, facts: { currentTtlMs: 1000, p99Ms: 9000, lease: {} }, check: 'passes', apply: 'nothing' },
      { entry: { ttlMs: 1000 }, facts: { currentTtlMs: 1000, lease: { renewals: 40 } }, check: 'warns', apply: 'nothing' },
    ],
  },
];

/** The first cells of a page's decision-table rows. */
function decisionRowsOf(page: string): string[] {
  const table = page.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| the data says') && !l.startsWith('|---'));
  return table.filter((l) => /\| (fails|warns|passes)/.test(l)).map((l) => l.split(' | ')[0]!.slice(2));
}

describe("the decision table (docs/policy.md, and README's main rows) is the code's", () => {
  it('has exactly these rows', () => {
    expect(decisionRowsOf(POLICY_DOC)).toEqual(ROWS.map((r) => r.says));
  });

  it("README's rows are rows of it, every cell word for word, in its order", () => {
    const linesOf = (page: string) => page.split('\n').filter((l) => /^\| .* \| (fails|warns|passes)/.test(l));
    const shown = linesOf(README);
    expect(shown.length).toBeGreaterThan(3);
    expect(shown).toEqual(linesOf(POLICY_DOC).filter((line) => shown.includes(line)));
  });

  for (const row of ROWS) {
    it(row.says, () => {
      for (const c of row.cases) {
        const analysis = analysisOf([patternAnalysis('p', c.facts)]);
        const policy = new TtlPolicy({ locks: { p: c.entry } });
        const result = checkPolicy(analysis, policy, { strict: c.strict });
        const decision = [...result.rows, ...result.fine][0]!.decision;
        const check = result.exitCode === 1 ? 'fails' : decision.level === 'warn' ? 'warns' : 'passes';
        const { changes } = applyRecommendations(analysis, policy);
        const apply = changes.length === 0 ? 'nothing' : changes[0]!.toMs > c.entry.ttlMs ? 'raises' : 'lowers';
        expect({ check, apply }, JSON.stringify(c)).toEqual({ check: c.check, apply: c.apply });
      }
    });
  }
});
