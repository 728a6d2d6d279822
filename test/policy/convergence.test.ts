import { describe, expect, it } from 'vitest';
import { random } from '../../fixtures/generate.js';
import type { Analysis } from '../../src/analyze/analyze.js';
import type { Decision } from '../../src/analyze/decision.js';
import type { HourRow } from '../../src/analyze/read-rollups.js';
import { resolveRecommendationPolicy } from '../../src/analyze/recommend.js';
import { summarize } from '../../src/analyze/summarize.js';
import { compareVerdicts } from '../../src/analyze/verdict.js';
import { applyRecommendations } from '../../src/policy/apply.js';
import { checkPolicy, type CheckRow } from '../../src/policy/check.js';
import { TtlPolicy, type PolicyEntry } from '../../src/policy/policy.js';
import { aggregatorFor } from '../../src/record/aggregator.js';
import type { LockSample } from '../../src/sample/sample.js';

/**
 * The convergence invariant, as a property over generated data sets and
 * policies: `check` fails only on something `apply` would change, or on a
 * decision only a human can take, named in the row (a pinned TTL, too little
 * data); after `apply` with the default options, `check` on the same data
 * exits 0 or names exactly such a decision; and `apply` again changes nothing.
 *
 * Each case's data goes through the recorder's own aggregator (the rollups and
 * raw rows a real file holds) and the analyzer's own `summarize`: mixed
 * distributions, expirations under and over the recommended TTL, censored holds
 * (watch), hung holders, short windows, pinned and template entries, `coverMs`.
 * Seeded: a failure prints the seed and the case.
 */

const CASES = 400;
const HOUR = 3_600_000;
const START = Date.UTC(2026, 10, 20);

const pick = <T,>(r: () => number, items: readonly T[]): T => items[Math.floor(r() * items.length)]!;
const normal = (r: () => number) => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());

interface PatternSpec {
  pattern: string;
  key: (i: number) => string;
  holds: number;
  medianMs: number;
  sigma: number;
  ttlMs: number;
  spanMs: number;
  /** Fraction of holds from a second, slower mode. */
  slowShare: number;
  /** Holders that hang: far past anything. */
  hung: number;
  /** Holds past the TTL are seen by watch (censored at the TTL) rather than by our lock (real hold). */
  watched: boolean;
  /** A lease: renewed every `alpha` × TTL, renewals late by up to `lateMs` now and then; the library it is. */
  lease: { alpha: number; lateMs: number; library: 'bullmq' | 'redlock' | 'redis-semaphore' | 'unknown' } | undefined;
}

const NAMES = [
  { pattern: 'order:lock:product:{id}', key: (i: number) => `order:lock:product:${i}` },
  { pattern: 'payment:lock:order:{id}', key: (i: number) => `payment:lock:order:${i}` },
  { pattern: 'job:lock:{id}', key: (i: number) => `job:lock:${i}` },
  // A pattern an added `job:lock:{id}` entry must not capture (it is no template).
  { pattern: 'job:lock:global', key: () => 'job:lock:global' },
  { pattern: 'job:lock:{uuid}', key: (i: number) => `job:lock:${(0x1000_0000 + i).toString(16)}-aaaa-4bbb-8ccc-${String(i).padStart(12, '0')}` },
  { pattern: 'cart:lock:{uuid}', key: (i: number) => `cart:lock:${(0x2000_0000 + i).toString(16)}-aaaa-4bbb-8ccc-${String(i).padStart(12, '0')}` },
];

function generatePatterns(r: () => number): PatternSpec[] {
  const count = 1 + Math.floor(r() * 4);
  const chosen = [...NAMES].sort(() => r() - 0.5).slice(0, count);
  return chosen.map(({ pattern, key }) => ({
    pattern,
    key,
    holds: pick(r, [20, 150, 298, 299, 320, 800, 2000, 4000]),
    medianMs: pick(r, [3, 20, 80, 300, 700, 1500, 4000]),
    sigma: pick(r, [0.1, 0.4, 0.8, 1.3]),
    ttlMs: pick(r, [100, 250, 500, 1000, 2000, 3000, 5000, 10_000, 30_000]),
    spanMs: pick(r, [40_000, 2 * HOUR, 23 * HOUR, 26 * HOUR, 48 * HOUR]),
    slowShare: pick(r, [0, 0, 0.005, 0.01, 0.03]),
    hung: pick(r, [0, 0, 1, 5]),
    watched: r() < 0.3,
    lease: r() < 0.3 ? { alpha: pick(r, [1 / 3, 0.5, 0.8]), lateMs: pick(r, [2, 50, 400, 3000]), library: pick(r, ['bullmq', 'redlock', 'redis-semaphore', 'unknown'] as const) } : undefined,
  }));
}

function samplesOf(spec: PatternSpec, r: () => number): LockSample[] {
  const samples: LockSample[] = [];
  for (let i = 0; i < spec.holds; i++) {
    const slow = r() < spec.slowShare;
    let hold = spec.medianMs * Math.exp(spec.sigma * normal(r)) * (slow ? 6 : 1);
    if (i < spec.hung) hold = spec.ttlMs * (5 + 20 * r()) + 60_000;
    hold = Math.min(Math.max(hold, 0.05), 3_600_000);
    const at = START + Math.floor((i / spec.holds) * spec.spanMs);
    const sample: LockSample = { key: spec.key(i), at, holdMs: hold, waitMs: 0, ttlMs: spec.ttlMs, outcome: 'released' };
    if (spec.lease) {
      // Renewed while held: lost only when a renewal came later than the TTL in force.
      const periodMs = Math.max(1, spec.lease.alpha * spec.ttlMs);
      const gapsMs: number[] = [];
      for (let t = 0; t + periodMs < hold && gapsMs.length < 256; ) {
        const gap = periodMs + (r() < 0.02 ? spec.lease.lateMs * r() : r() * 2);
        gapsMs.push(gap);
        t += gap;
      }
      const minMarginMs = Math.min(spec.ttlMs, ...gapsMs.map((g) => spec.ttlMs - g));
      const known = spec.lease.library === 'bullmq';
      Object.assign(sample, { extensions: gapsMs.length, renewal: { gapsMs, minMarginMs, library: spec.lease.library, ...(known && { periodMs }) } });
      if (minMarginMs <= 0) sample.outcome = 'expired';
      samples.push(sample);
      continue;
    }
    if (hold >= spec.ttlMs) {
      sample.outcome = 'expired';
      // watch sees only the expiry: the hold is at least the TTL, its end unseen.
      if (spec.watched) Object.assign(sample, { holdMs: spec.ttlMs, censored: true, waitMs: null });
    }
    samples.push(sample);
  }
  return samples;
}

/** The analysis a file of these samples gives: the recorder's aggregator, then the analyzer's summarize. */
function analysisOf(specs: PatternSpec[], r: () => number, floorMs: number): Analysis {
  const policy = resolveRecommendationPolicy({ floorMs });
  const aggregator = aggregatorFor('gen', [], { maxPatterns: 100, budget: { failed: 1000, slowest: 20, uniform: 20 }, rawSampleRate: 0, maxPendingRawRows: 1_000_000 });
  // Every sample is taken (fold returns 0): counted here, checked once, as an expect per sample cost more than the fold.
  let refused = 0;
  for (const spec of specs) for (const s of samplesOf(spec, r)) if (aggregator.fold(s) !== 0) refused++;
  expect(refused, 'samples the aggregator did not take').toBe(0);
  const { batches } = aggregator.seal(START + 100 * HOUR, true);
  const rows = new Map<string, HourRow[]>();
  const expired = new Map<string, number[]>();
  for (const batch of batches) {
    for (const f of batch.rollups) (rows.get(f.pattern) ?? rows.set(f.pattern, []).get(f.pattern)!).push([f.bucketStartMs, ...f.values]);
    for (const [, , pattern, holdUs, , , flags, , lost, censored] of batch.raw) {
      if ((flags & 3) === 1 && lost === 0 && censored === 0 && holdUs >= 0) (expired.get(pattern) ?? expired.set(pattern, []).get(pattern)!).push(holdUs / 1000);
    }
  }
  const patterns = [...rows].map(([name, hourRows]) => summarize(name, hourRows.sort((a, b) => a[0] - b[0]), policy, () => expired.get(name) ?? []));
  patterns.sort((a, b) => compareVerdicts(a.verdict, b.verdict) || b.count - a.count || a.pattern.localeCompare(b.pattern));
  return {
    generatedAtMs: START,
    window: { fromMs: Math.min(...patterns.map((p) => p.firstMs)), toMs: Math.max(...patterns.map((p) => p.lastMs)) },
    requested: { sinceMs: undefined, untilMs: undefined },
    policy,
    sources: ['generated.db'],
    patterns,
    unconfirmed: [],
    warnings: [],
    gaps: [],
  };
}

function generatePolicy(r: () => number, specs: PatternSpec[]): TtlPolicy {
  const locks: Record<string, PolicyEntry> = {};
  for (const spec of specs) {
    if (r() < 0.2) continue; // left to the default
    // Sometimes one template entry for both job patterns.
    const name = spec.pattern.startsWith('job:lock:') && r() < 0.5 ? 'job:lock:{name}' : spec.pattern;
    const entry: PolicyEntry = { ttlMs: r() < 0.4 ? spec.ttlMs : pick(r, [200, 1000, 2900, 3000, 3100, 5000, 16_100, 60_000]) };
    if (r() < 0.15) Object.assign(entry, { pinned: true, reason: 'vendor limit' });
    if (r() < 0.1) entry.coverMs = pick(r, [4000, 12_000]);
    locks[name] ??= entry;
  }
  if (r() < 0.2) locks['order:lock:prodcut:{id}'] = { ttlMs: 5000 };
  return new TtlPolicy({ locks, ...(r() < 0.5 ? { defaultTtlMs: pick(r, [1000, 10_000]) } : {}) });
}

/** A failing row must name why only a human can act, when apply does not act. */
function humanDecision(d: Decision): boolean {
  if (d.apply.kind !== 'hold') return false;
  const named =
    d.apply.why.kind === 'too-few-samples'
      ? d.findings.some((f) => f.kind === 'insufficient-data')
      : d.apply.why.kind === 'too-few-renewals'
        ? d.findings.some((f) => f.kind === 'insufficient-renewals')
        : d.findings.some((f) => f.kind === 'held');
  return named && ['pinned', 'too-few-samples', 'too-few-renewals', 'short-window'].includes(d.apply.why.kind);
}

const describeCase = (seed: number, specs: PatternSpec[], policy: TtlPolicy) =>
  `seed ${seed}: ${JSON.stringify(specs.map(({ key: _, ...s }) => s))} policy ${JSON.stringify(policy.document)}`;

describe('convergence: check fails only on what apply changes, or on a decision it names', () => {
  it(`holds for ${CASES} generated data sets and policies`, () => {
    let failedBefore = 0;
    let convergedToZero = 0;
    let heldByHuman = 0;
    const leases = { atRisk: 0, ok: 0 };
    for (let seed = 1; seed <= CASES; seed++) {
      const r = random(seed);
      const specs = generatePatterns(r);
      const floorMs = r() < 0.25 ? 1000 : 3000;
      const analysis = analysisOf(specs, r, floorMs);
      const policy = generatePolicy(r, specs);
      const where = () => describeCase(seed, specs, policy);

      // Before apply: every failing row is one apply changes, or a named human decision.
      const before = checkPolicy(analysis, policy);
      const applied = applyRecommendations(analysis, policy);
      const changed = new Set(applied.changes.map((c) => c.pattern));
      for (const row of [...before.rows, ...before.missingFromPolicy].filter((x: CheckRow) => x.failing)) {
        const acts = row.decision.apply.kind === 'write' && changed.has(row.pattern);
        expect(acts || humanDecision(row.decision), `${row.dataPattern} fails but apply leaves it: ${where()}`).toBe(true);
      }
      if (before.exitCode === 1) failedBefore++;

      // After apply: exit 0, or every failing row names a human's decision.
      const after = checkPolicy(analysis, new TtlPolicy(applied.document));
      for (const row of [...after.rows, ...after.missingFromPolicy].filter((x: CheckRow) => x.failing)) {
        expect(humanDecision(row.decision), `${row.dataPattern} still fails after apply (${JSON.stringify(row.decision)}): ${where()}`).toBe(true);
        heldByHuman++;
      }
      if (after.exitCode === 0) convergedToZero++;
      for (const p of analysis.patterns) if (p.lease) p.verdict === 'lease-at-risk' ? leases.atRisk++ : p.verdict === 'ok' && leases.ok++;
      // Nothing that needs a human is left unsaid: every warn or fail row has a finding.
      for (const row of [...after.rows, ...after.missingFromPolicy]) expect(row.decision.findings.length, where()).toBeGreaterThan(0);

      // Idempotent: apply again to the same data changes nothing.
      expect(applyRecommendations(analysis, new TtlPolicy(applied.document)).changes, where()).toEqual([]);
    }
    // The generator reaches every corner it claims to: failures before, convergence after, and human decisions.
    expect(failedBefore).toBeGreaterThan(CASES / 5);
    expect(convergedToZero).toBeGreaterThan(CASES / 4);
    expect(heldByHuman).toBeGreaterThan(0);
    expect(leases.atRisk, 'lease patterns at risk').toBeGreaterThan(CASES / 20);
    expect(leases.ok, 'lease patterns renewing in time').toBeGreaterThan(CASES / 20);
  }, 120_000);
});
