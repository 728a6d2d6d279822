import { realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { analyze, parsePolicy } from '../../src/index.js';
import { checkCode } from '../../src/code/decide.js';
import type { CodeSite } from '../../src/code/types.js';
import { checkPolicy } from '../../src/policy/check.js';
import { TtlPolicy } from '../../src/policy/policy.js';
import { random } from '../../fixtures/generate.js';
import { buildDb } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Issue 46: no false green. Whatever the code holds — sites for some data patterns and not others, TTLs
 * long or short, patterns the data never saw, keys not mapped — a data pattern `check` fails on (same data,
 * same policy file, same options) makes `check --code` fail. Random code against the generated data's
 * patterns (hostile keys included), 300 rounds; the control shows the property is not vacuous.
 */

const dir = realpathSync(tempDir('ttl-advisor-no-false-green-'));
const analysis = analyze([buildDb(dir, 'every.db')], { nowMs: Date.UTC(2026, 10, 30) });

function site(rand: () => number, pattern: string | undefined, ttlMs: number, i: number): CodeSite {
  return {
    at: { file: 'src/service.ts', line: i + 1 },
    library: 'ioredis',
    call: 'SET PX NX',
    pattern,
    keyText: pattern ?? 'keyFor(job)',
    ttl: { option: 'PX', role: 'ttl', valueMs: ttlMs, declaration: { file: 'src/ttl.ts', line: 1 + Math.floor(rand() * 3) }, literal: undefined, why: { kind: 'computed', text: 'TTL' }, msPerUnit: 1 },
    renewals: [],
    patterns: pattern === undefined ? [] : [pattern],
    via: [],
  };
}

describe('check --code is never less strict than check on the same data', () => {
  it('300 random codes and policies: every data pattern check fails on makes check --code fail', () => {
    const rand = random(46);
    const patterns = analysis.patterns.map((p) => p.pattern);
    let failingRounds = 0;
    for (let round = 0; round < 300; round++) {
      const locks: Record<string, { ttlMs: number }> = {};
      for (const p of patterns) if (rand() < 0.4) locks[p] = { ttlMs: [500, 3000, 10_000, 600_000][Math.floor(rand() * 4)]! };
      const policy = new TtlPolicy(parsePolicy(JSON.stringify({ locks, defaultTtlMs: [1000, 10_000, 120_000][Math.floor(rand() * 3)] })), 'ttl-advisor.json');
      const sites: CodeSite[] = [];
      for (const p of patterns) if (rand() < 0.6) sites.push(site(rand, p, [100, 5000, 60_000, 3_600_000][Math.floor(rand() * 4)]!, sites.length));
      if (rand() < 0.5) sites.push(site(rand, 'lock:the-data-never-saw:{id}', 5000, sites.length));
      if (rand() < 0.5) sites.push(site(rand, undefined, 5000, sites.length));
      const options = { strict: rand() < 0.3, failOnInsufficientData: rand() < 0.3 };
      const check = checkPolicy(analysis, policy, options);
      const code = checkCode({ sites, skipped: [] }, analysis, policy, options);
      if (check.exitCode === 1) {
        failingRounds++;
        expect(code.exitCode, `round ${round}: check fails on ${[...check.rows, ...check.missingFromPolicy].filter((r) => r.failing).map((r) => r.dataPattern).join(', ')}`).toBe(1);
      }
    }
    // The control: check does fail in many rounds, so the property was put to the test.
    expect(failingRounds).toBeGreaterThan(50);
  });

  it('without a policy file, a data pattern no site governs is judged with the TTL it ran with, and fails check --code where that fails', () => {
    const failing = analysis.patterns.filter((p) => p.decision.level === 'fail');
    expect(failing.length).toBeGreaterThan(0);
    const code = checkCode({ sites: [], skipped: [] }, analysis, undefined, {});
    expect(code.exitCode).toBe(1);
    expect(code.unmatched.filter((u) => u.decision.level === 'fail').map((u) => u.pattern).sort()).toEqual(failing.map((p) => p.pattern).sort());
  });
});
