import { describe, expect, it } from 'vitest';
import type { PatternAnalysis } from '../../src/analyze/summarize.js';
import { hourlySpec, overviewSpec } from '../../src/report/charts.js';
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
    // The p99 line (blue) is drawn in two runs, broken at the missing hours…
    const p99Path = [...svg.matchAll(/<path aria-label="[^"]*name: p99"[^>]*d="([^"]+)"/g)].map((m) => m[1]!);
    const [line, ...points] = p99Path;
    expect(line!.match(/M/g)).toHaveLength(2);
    // …with a point per hour that has data, so an hour alone still shows.
    expect(points).toHaveLength(4);
  });
});

describe('the overview chart', () => {
  const row = (i: number, currentMs: number, recommendedTtlMs: number, verdict: string) => ({
    pattern: `svc${i}:lock:{id}`,
    holdMs: { p99: recommendedTtlMs / 3 },
    ttl: { currentMs },
    recommendedTtlMs,
    verdict,
  });

  it('shows both markers when the current and recommended TTL nearly coincide, and names each verdict', async () => {
    const svg = await renderSvg(overviewSpec({ patterns: [row(1, 5000, 5100, 'too-short'), row(2, 3000, 3000, 'ok')] } as never));
    // A ring and a diamond per row, however close: two point marks each.
    expect(svg.match(/aria-roledescription="point"/g)).toHaveLength(4);
    expect(svg).toContain('1. svc1:lock:{id} · too short');
    expect(svg).toContain('2. svc2:lock:{id} · ok');
    expect(svg.match(/aria-roledescription="axis"/g)).toHaveLength(2);
  });

  it('a tall chart has its axis at the top as well', async () => {
    const patterns = Array.from({ length: 16 }, (_, i) => row(i + 1, 3000 * (i + 1), 3000, i % 2 ? 'too-long' : 'ok'));
    const svg = await renderSvg(overviewSpec({ patterns } as never));
    expect(svg.match(/aria-roledescription="axis"/g)).toHaveLength(3);
  });
});
