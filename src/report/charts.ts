import type { TopLevelSpec } from 'vega-lite';
import type { Analysis } from '../analyze/analyze.js';
import type { PatternAnalysis } from '../analyze/summarize.js';
import { printable, truncate } from '../text.js';
import { formatMs } from '../units.js';
import { VERDICT_COLOR, VERDICT_LABEL } from './verdict-style.js';

/**
 * The report's charts as vega-lite specs: data first, pictures second. Each
 * spec carries its data inline, so rendering needs no network.
 */

const WIDTH = 640;
const FONT = 'system-ui, -apple-system, Segoe UI, Roboto, sans-serif';
const LABEL_LIMIT = 44;

const base = {
  $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
  background: 'white',
  config: { font: FONT, axis: { labelFontSize: 11, titleFontSize: 11 }, legend: { labelFontSize: 11, titleFontSize: 11 }, view: { stroke: null } },
} as const;

/** A pattern shortened for an axis label (the full text is in the tables). */
export function chartLabel(pattern: string): string {
  return truncate(printable(pattern), LABEL_LIMIT);
}

/** Current vs recommended TTL for every pattern, with p99, on a log axis. */
export function overviewSpec(analysis: Analysis): TopLevelSpec {
  const rows = analysis.patterns.map((p, i) => ({
    label: `${i + 1}. ${chartLabel(p.pattern)}`,
    order: i,
    p99: Math.max(p.holdMs.p99, 0.001),
    current: Math.max(p.ttl.currentMs, 0.001),
    recommended: p.recommendedTtlMs,
    lo: Math.min(p.ttl.currentMs, p.recommendedTtlMs),
    hi: Math.max(p.ttl.currentMs, p.recommendedTtlMs),
    verdict: VERDICT_LABEL[p.verdict],
  }));
  const points = rows.flatMap((r) => [
    { label: r.label, order: r.order, kind: 'hold p99', ms: r.p99 },
    { label: r.label, order: r.order, kind: 'current TTL', ms: r.current },
    { label: r.label, order: r.order, kind: 'recommended TTL', ms: r.recommended },
  ]);
  const y = { field: 'label', type: 'nominal', sort: { field: 'order' }, title: null, axis: { labelLimit: 320 } } as const;
  const x = { type: 'quantitative', scale: { type: 'log' }, title: 'milliseconds (log scale)' } as const;
  return {
    ...base,
    width: WIDTH,
    height: { step: 22 },
    title: { text: 'Current vs recommended TTL', anchor: 'start', fontSize: 13 },
    layer: [
      {
        data: { values: rows },
        mark: { type: 'rule', strokeWidth: 3, opacity: 0.5 },
        encoding: {
          y,
          x: { ...x, field: 'lo' },
          x2: { field: 'hi' },
          color: {
            field: 'verdict',
            type: 'nominal',
            title: 'verdict',
            scale: { domain: Object.values(VERDICT_LABEL), range: Object.values(VERDICT_COLOR) },
          },
        },
      },
      {
        data: { values: points },
        mark: { type: 'point', filled: true, size: 70 },
        encoding: {
          y,
          x: { ...x, field: 'ms' },
          shape: {
            field: 'kind',
            type: 'nominal',
            title: null,
            scale: { domain: ['hold p99', 'current TTL', 'recommended TTL'], range: ['stroke', 'circle', 'diamond'] },
          },
          fill: {
            field: 'kind',
            type: 'nominal',
            legend: null,
            scale: { domain: ['hold p99', 'current TTL', 'recommended TTL'], range: ['#37474f', '#1565c0', '#2e7d32'] },
          },
          stroke: {
            field: 'kind',
            type: 'nominal',
            legend: null,
            scale: { domain: ['hold p99', 'current TTL', 'recommended TTL'], range: ['#37474f', '#1565c0', '#2e7d32'] },
          },
        },
      },
    ],
    resolve: { scale: { color: 'independent' } },
  } as TopLevelSpec;
}

/** The hold-time distribution on a log axis, with p99, the current TTL and the recommended TTL marked. */
export function distributionSpec(p: PatternAnalysis): TopLevelSpec {
  const marks = [
    { name: `p99 ${formatMs(p.holdMs.p99)}`, ms: Math.max(p.holdMs.p99, 0.001), color: '#37474f', dash: [4, 3] },
    { name: `current TTL ${formatMs(p.ttl.currentMs)}`, ms: Math.max(p.ttl.currentMs, 0.001), color: VERDICT_COLOR[p.verdict], dash: [] },
    { name: `recommended ${formatMs(p.recommendedTtlMs)}`, ms: p.recommendedTtlMs, color: '#2e7d32', dash: [8, 3] },
  ];
  const x = { type: 'quantitative', scale: { type: 'log' }, title: 'hold time, ms (log scale)' } as const;
  return {
    ...base,
    width: WIDTH,
    height: 180,
    title: { text: 'Hold-time distribution', anchor: 'start', fontSize: 12 },
    layer: [
      {
        data: { values: p.distribution },
        mark: { type: 'rect', color: '#90a4ae' },
        encoding: {
          x: { ...x, field: 'lowMs' },
          x2: { field: 'highMs' },
          y: { field: 'count', type: 'quantitative', title: 'locks' },
        },
      },
      {
        data: { values: marks },
        mark: { type: 'rule', strokeWidth: 2 },
        encoding: {
          x: { ...x, field: 'ms' },
          color: { field: 'name', type: 'nominal', title: null, scale: { domain: marks.map((m) => m.name), range: marks.map((m) => m.color) } },
          strokeDash: { field: 'name', type: 'nominal', title: null, scale: { domain: marks.map((m) => m.name), range: marks.map((m) => m.dash) } },
        },
      },
    ],
  } as TopLevelSpec;
}

/** p99 per hour across the window, to expose daily peaks. */
export function hourlySpec(p: PatternAnalysis): TopLevelSpec {
  return {
    ...base,
    width: WIDTH,
    height: 140,
    title: { text: 'Hold-time p99 per hour (UTC)', anchor: 'start', fontSize: 12 },
    data: { values: p.hourly.map((h) => ({ hour: h.hourStartMs, p99: h.p99Ms, count: h.count })) },
    layer: [
      {
        mark: { type: 'line', point: { size: 18 }, color: '#1565c0', interpolate: 'step-after' },
        encoding: {
          x: { field: 'hour', type: 'temporal', timeUnit: 'utcyearmonthdatehours', title: null },
          y: { field: 'p99', type: 'quantitative', title: 'p99, ms' },
        },
      },
    ],
  } as TopLevelSpec;
}
