import { describe, expect, it } from 'vitest';
import type { PatternAnalysis } from '../../src/analyze/summarize.js';
import { hourlySpec } from '../../src/report/charts.js';
import { renderSvg } from '../../src/report/render-svg.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 28);

function pattern(hours: number[]): PatternAnalysis {
  return {
    hourly: hours.map((h) => ({ hourStartMs: T0 + h * HOUR, count: 10, p99Ms: 900 + h, maxMs: 4000 + h })),
    ttl: { currentMs: 5000, minMs: 5000, maxMs: 5000 },
    recommendedTtlMs: 3000,
    verdict: 'too-long',
  } as unknown as PatternAnalysis;
}

describe('the hourly chart', () => {
  it('shows p99 and the longest hold against the current and recommended TTL, with gaps for hours without data', async () => {
    const spec = hourlySpec(pattern([0, 1, 4, 5])) as unknown as { layer: { data: { values: { hour?: number; series?: string; ms?: number | null; name?: string }[] } }[] };
    const [lines, rules] = spec.layer;
    const p99 = lines!.data.values.filter((v) => v.series === 'p99');
    expect(p99.map((v) => (v.hour! - T0) / HOUR)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(p99.map((v) => v.ms)).toEqual([900, 901, null, null, 904, 905]); // a gap, not a bridge
    expect(rules!.data.values.map((v) => v.name)).toEqual(['current TTL 5 s', 'recommended 3 s']);
    const svg = await renderSvg(spec as never);
    expect(svg).toMatch(/current TTL 5 s/);
    expect(svg).toMatch(/recommended 3 s/);
    // The p99 line (blue) is drawn in two runs, broken at the missing hours.
    const p99Path = [...svg.matchAll(/<path aria-label="[^"]*name: p99"[^>]*d="([^"]+)"/g)].map((m) => m[1]!);
    expect(p99Path).toHaveLength(1);
    expect(p99Path[0]!.match(/M/g)).toHaveLength(2);
  });
});
