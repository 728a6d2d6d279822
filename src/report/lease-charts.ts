import type { TopLevelSpec } from 'vega-lite';
import { AT_RISK_SHARE, type LeaseAnalysis } from '../analyze/lease.js';
import { formatMs } from '../units.js';

/**
 * A lease's charts (see `analyze/lease.ts`): how late renewals came, against
 * how late they may come before the lease is lost; and the least margin left per
 * hour. Inline data, as every report chart.
 */

const base = {
  $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
  background: 'white',
  config: { font: 'system-ui, -apple-system, Segoe UI, Roboto, sans-serif', axis: { labelFontSize: 11, titleFontSize: 11 }, legend: { labelFontSize: 11, titleFontSize: 11 }, view: { stroke: null } },
} as const;
const WIDTH = 640;

/**
 * Renewal lateness (log axis), with the lateness that loses the lease now
 * (TTL − period) and under the recommended lease (lease − its renewal period).
 */
export function leaseLatenessSpec(lease: LeaseAnalysis, ttlMs: number): TopLevelSpec {
  const { leaseMs, renewEveryMs } = lease.recommended;
  const marks = [
    { name: `q99.9 ${formatMs(lease.latenessMs.p999)}`, ms: Math.max(lease.latenessMs.p999, 0.1), color: '#37474f', dash: [4, 3] },
    { name: `lost past ${formatMs(Math.max(0, ttlMs - lease.periodMs))} (the ${formatMs(ttlMs)} lease in use)`, ms: Math.max(ttlMs - lease.periodMs, 0.1), color: '#c62828', dash: [] },
    { name: `lost past ${formatMs(leaseMs - renewEveryMs)} (recommended ${formatMs(leaseMs)})`, ms: Math.max(leaseMs - renewEveryMs, 0.1), color: '#2e7d32', dash: [8, 3] },
  ];
  const x = { type: 'quantitative', scale: { type: 'log', padding: 12 }, title: 'renewal lateness, ms (log scale; on time and early at 0.1)' } as const;
  const scale = (key: 'color' | 'dash') => ({ domain: marks.map((m) => m.name), range: marks.map((m) => m[key]) });
  return {
    ...base,
    width: WIDTH,
    height: 160,
    title: { text: `Renewal lateness (${lease.periodSource === 'known' ? 'gap − the holders’ period' : 'gap − the median gap'})`, anchor: 'start', fontSize: 12 },
    layer: [
      {
        data: { values: lease.lateness },
        mark: { type: 'rect', color: '#90a4ae' },
        encoding: { x: { ...x, field: 'lowMs' }, x2: { field: 'highMs' }, y: { field: 'count', type: 'quantitative', title: 'renewals' } },
      },
      {
        data: { values: marks },
        mark: { type: 'rule', strokeWidth: 2 },
        encoding: {
          x: { ...x, field: 'ms' },
          color: { field: 'name', type: 'nominal', title: null, scale: scale('color'), legend: { labelLimit: 380, orient: 'bottom', direction: 'vertical' } },
          strokeDash: { field: 'name', type: 'nominal', title: null, scale: scale('dash') },
        },
      },
    ],
  } as TopLevelSpec;
}

/** The least margin left at a renewal, per hour (UTC), against the at-risk line (see `AT_RISK_SHARE`) and the TTL. */
export function leaseMarginSpec(lease: LeaseAnalysis, ttlMs: number): TopLevelSpec {
  const line = lease.atRiskBelowMs < AT_RISK_SHARE * ttlMs ? 'half an on-time margin' : `20 % of ${formatMs(ttlMs)}`;
  const lines = [
    { name: `at risk below ${formatMs(lease.atRiskBelowMs)} (${line})`, ms: lease.atRiskBelowMs, color: '#c62828' },
    { name: `TTL ${formatMs(ttlMs)}`, ms: ttlMs, color: '#90a4ae' },
  ];
  const color = {
    field: 'name',
    type: 'nominal',
    title: null,
    scale: { domain: ['least margin', ...lines.map((l) => l.name)], range: ['#1565c0', ...lines.map((l) => l.color)] },
    legend: { symbolType: 'stroke', symbolStrokeWidth: 2, labelLimit: 380 },
  } as const;
  const y = { type: 'quantitative', title: 'ms left at a renewal', scale: { domainMin: 0 } } as const;
  return {
    ...base,
    width: WIDTH,
    height: 140,
    title: { text: 'Least margin left at a renewal, per hour (UTC)', anchor: 'start', fontSize: 12 },
    layer: [
      {
        data: { values: lease.hourly.map((h) => ({ hour: h.hourStartMs, ms: h.minMarginMs, name: 'least margin' })) },
        mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1.5, point: { size: 22, filled: true } },
        encoding: { x: { field: 'hour', type: 'temporal', title: null, scale: { type: 'utc' }, axis: { labelAngle: 0, format: '%b %d %H:00' } }, y: { ...y, field: 'ms' }, color },
      },
      { data: { values: lines }, mark: { type: 'rule', strokeWidth: 2 }, encoding: { y: { ...y, field: 'ms' }, color } },
    ],
  } as TopLevelSpec;
}
