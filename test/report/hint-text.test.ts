import { describe, expect, it } from 'vitest';
import { analyze, type Analysis } from '../../src/analyze/analyze.js';
import { patternHints, type AnalysisWarning, type Hint, type HintFigures } from '../../src/analyze/hints.js';
import { renderCheckMarkdown } from '../../src/report/check.js';
import { hintSentences, hintText, nothingMatchedText, warningSentences, warningText } from '../../src/report/hint-text.js';
import { renderJson } from '../../src/report/json.js';
import { markdownText, renderMarkdown } from '../../src/report/markdown.js';
import { buildDb } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

/**
 * The analysis says what it found as data; report/hint-text.ts words it. The
 * sentences are the ones the analysis used to write itself, word for word.
 */

describe('the words for each hint', () => {
  const cases: [Hint, string][] = [
    [
      { kind: 'lost', lost: 3 },
      '3 lock(s) vanished before their TTL could have run out: deleted by someone else or lost by Redis (a restart without persistence, a failover). ' +
        'Not a sign of a short TTL; fencing tokens protect against it.',
    ],
    [
      { kind: 'extended', extended: 5, extensions: 12, count: 200 },
      '5 lock(s) (2.5 %) were extended while held, 12 time(s) in all: for them the TTL is not the hold budget, and a hold longer than the TTL was no expiration.',
    ],
    [
      { kind: 'waits-unknown', waitCount: 0, count: 50 },
      'Wait times are unknown: these locks were seen by `ttl-advisor watch`, and Redis does not see a client wait or retry.',
    ],
    [
      { kind: 'waits-unknown', waitCount: 30, count: 50 },
      'Wait times are known for 30 of 50 locks: the others were seen by `ttl-advisor watch`, which does not see a client wait or retry.',
    ],
    [{ kind: 'several-ttls', minMs: 3000, maxMs: 10_000 }, 'Several TTLs in use (3 s–10 s); the most common is compared.'],
    // TTLs that read alike rounded are shown in ms.
    [{ kind: 'several-ttls', minMs: 4998, maxMs: 5000 }, 'Several TTLs in use (4998 ms–5000 ms); the most common is compared.'],
  ];
  it.each(cases)('%o', (hint, sentence) => {
    expect(hintText(hint)).toBe(sentence);
  });
});

describe('the words for each warning', () => {
  const cases: [AnalysisWarning, string][] = [
    [{ kind: 'same-file', path: 'b.db', firstPath: 'a.db' }, 'b.db is the same file as a.db; read once.'],
    [
      { kind: 'shared-instances', instances: 2, firstPath: 'merged.db' },
      '2 instance(s) appear in more than one file (a merged file and its inputs?); each is counted once, from the first file given that holds it (merged.db, …).',
    ],
    [{ kind: 'unreadable-rows', rows: 4, patterns: ['a', 'b'] }, '4 rollup row(s) could not be read (a damaged file?) and were left out: a, b.'],
    [{ kind: 'unreadable-rows', rows: 9, patterns: ['a', 'b', 'c', 'd'] }, '9 rollup row(s) could not be read (a damaged file?) and were left out: a, b, c, ….'],
    [{ kind: 'short-window', spanMs: 5 * 3_600_000 }, 'The samples span 5.0 h, less than 24 h: daily peaks may be missing, so p99 may be too low.'],
    [
      { kind: 'nothing-matched', held: { samples: 0, firstMs: undefined, lastMs: undefined } },
      'No samples yet: wrap your locks with a recorder and come back after a day or two.',
    ],
    [
      { kind: 'nothing-matched', held: { samples: 74_948, firstMs: Date.UTC(2026, 10, 28), lastMs: Date.UTC(2026, 10, 29, 23, 59) } },
      'No samples in the window and patterns asked for: the database holds 74,948 samples from 2026-11-28 00:00 UTC to 2026-11-29 23:59 UTC.',
    ],
  ];
  it.each(cases)('%o', (warning, sentence) => {
    expect(warningText(warning)).toBe(sentence);
  });

  it('the CLI’s refusal for an empty window is the same sentence', () => {
    const held = { samples: 12, firstMs: 0, lastMs: 3_600_000 };
    expect(nothingMatchedText(held)).toBe(warningText({ kind: 'nothing-matched', held }));
  });
});

describe('hints are drawn from the figures', () => {
  const quiet: HintFigures = {
    count: 1000,
    lost: 0,
    waitCount: 1000,
    extended: 0,
    extensions: 0,
    ttl: { minMs: 5000, maxMs: 5000 },
  };

  it('none when nothing is remarkable (the control)', () => {
    expect(patternHints(quiet)).toEqual([]);
  });

  it('each one, with its numbers; expirations, too few hold times and contention are findings of the decision, not hints', () => {
    const hints = patternHints({
      ...quiet,
      lost: 1,
      waitCount: 400,
      extended: 7,
      extensions: 9,
      ttl: { minMs: 3000, maxMs: 5000 },
    });
    expect(hints).toEqual([
      { kind: 'lost', lost: 1 },
      { kind: 'extended', extended: 7, extensions: 9, count: 1000 },
      { kind: 'waits-unknown', waitCount: 400, count: 1000 },
      { kind: 'several-ttls', minMs: 3000, maxMs: 5000 },
    ]);
  });
});

describe('every report words them through hint-text', () => {
  const dir = tempDir();
  const short = buildDb(dir, 'short.db', { hours: 5, seed: 9 });
  const analysis: Analysis = analyze([short, short], { nowMs: 0 });

  it('the analysis carries data, not sentences', () => {
    expect(analysis.warnings.map((w) => w.kind).sort()).toEqual(['same-file', 'short-window']);
    for (const p of analysis.patterns) for (const note of [...p.hints, ...p.decision.findings]) expect(typeof note.kind).toBe('string');
    // Too few hold times in five hours: said as a finding (data), once.
    expect(analysis.patterns.some((p) => p.decision.findings.some((f) => f.kind === 'insufficient-data'))).toBe(true);
  });

  it('JSON keeps its sentences', () => {
    const json = JSON.parse(renderJson(analysis)) as { warnings: string[]; patterns: { pattern: string; hints: string[] }[] };
    expect(json.warnings).toEqual(warningSentences(analysis));
    expect(json.warnings.join(' ')).toMatch(/less than 24 h/);
    for (const p of analysis.patterns) expect(json.patterns.find((j) => j.pattern === p.pattern)!.hints).toEqual(hintSentences(p));
  });

  it('Markdown and the check comment show each warning, escaped', () => {
    const markdown = renderMarkdown(analysis);
    const check = renderCheckMarkdown({ rows: [], fine: [], missingFromPolicy: [], noData: [], unconfirmed: [], defaultTtlMs: 10_000, exitCode: 0 }, analysis);
    for (const sentence of warningSentences(analysis)) {
      expect(markdown).toContain(`> ⚠️ ${markdownText(sentence)}`);
      expect(check).toContain(`> ⚠️ ${markdownText(sentence)}`);
    }
  });
});
