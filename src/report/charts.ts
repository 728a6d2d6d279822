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

/**
 * Current vs recommended TTL for every pattern, with p99, on a log axis. The
 * verdict is told three ways, so no reader depends on colour: the bar and the
 * recommended marker take the verdict's colour, and the row's label names it.
 * The current TTL is a hollow ring and the recommendation a filled diamond, so
 * when they coincide (5 s and 5.1 s) both stay visible.
 */
export function overviewSpec(analysis: Analysis): TopLevelSpec {
  const rows = analysis.patterns.map((p, i) => ({
    label: `${i + 1}. ${chartLabel(p.pattern)} · ${VERDICT_LABEL[p.verdict]}`,
    order: i,
    p99: Math.max(p.holdMs.p99, 0.001),
    current: Math.max(p.ttl.currentMs, 0.001),
    recommended: p.recommendedTtlMs,
    // On the log axis as the points are: a TTL not known (0, a histogram of a team's own) drew the bar to NaN.
    lo: Math.max(Math.min(p.ttl.currentMs, p.recommendedTtlMs), 0.001),
    hi: Math.max(p.ttl.currentMs, p.recommendedTtlMs, 0.001),
    verdict: VERDICT_LABEL[p.verdict],
  }));
  const y = { field: 'label', type: 'nominal', sort: { field: 'order' }, title: null, axis: { labelLimit: 520, labelFontSize: 12 } } as const;
  const x = { type: 'quantitative', scale: { type: 'log' }, title: 'milliseconds (log scale)', axis: { labelFontSize: 11, grid: true } } as const;
  const verdictColor = {
    field: 'verdict',
    type: 'nominal',
    title: 'verdict',
    scale: { domain: Object.values(VERDICT_LABEL), range: Object.values(VERDICT_COLOR) },
  } as const;
  return {
    ...base,
    width: WIDTH,
    height: { step: 26 },
    title: { text: 'Current vs recommended TTL', anchor: 'start', fontSize: 13 },
    data: { values: rows },
    layer: [
      { mark: { type: 'rule', strokeWidth: 4, opacity: 0.45 }, encoding: { y, x: { ...x, field: 'lo' }, x2: { field: 'hi' }, color: verdictColor } },
      {
        mark: { type: 'tick', orient: 'vertical', color: '#37474f', thickness: 2, size: 14 },
        // A tall chart gets its axis at the top too, so the first rows need no scrolling to read.
        encoding: { y, x: { ...x, field: 'p99', axis: rows.length > 12 ? { ...x.axis, orient: 'top', title: null } : null } },
      },
      { mark: { type: 'point', shape: 'circle', filled: false, size: 150, strokeWidth: 2.5, color: '#1f2328' }, encoding: { y, x: { ...x, field: 'current', axis: null } } },
      {
        mark: { type: 'point', shape: 'diamond', filled: true, size: 90, stroke: 'white', strokeWidth: 1 },
        encoding: { y, x: { ...x, field: 'recommended', axis: null }, color: { ...verdictColor, legend: null } },
      },
    ],
    resolve: { axis: { x: 'independent' } },
  } as TopLevelSpec;
}

/** The hold-time distribution on a log axis, with p99, the current TTL and the recommended TTL marked. */
export function distributionSpec(p: PatternAnalysis): TopLevelSpec {
  const marks = [
    { name: `p99 ${formatMs(p.holdMs.p99)}`, ms: Math.max(p.holdMs.p99, 0.001), color: '#37474f', dash: [4, 3] },
    { name: `${p.lease ? 'lease in use' : 'current TTL'} ${formatMs(p.ttl.currentMs)}`, ms: Math.max(p.ttl.currentMs, 0.001), color: VERDICT_COLOR[p.verdict], dash: [] },
    { name: `recommended ${p.lease ? 'lease ' : ''}${formatMs(p.recommendedTtlMs)}`, ms: p.recommendedTtlMs, color: '#2e7d32', dash: [8, 3] },
  ];
  // Padded, so that a line at the largest value (a TTL of exactly 10 s) never sits on the chart's edge.
  const x = { type: 'quantitative', scale: { type: 'log', padding: 12 }, title: 'hold time, ms (log scale)' } as const;
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

/**
 * The hourly chart shows at most the latest this many hours. One row decades
 * before the rest (a timestamp in seconds, already in a file) stretched it
 * over 56 years of hours: a report took 31 s and 1.4 GB.
 */
export const MAX_CHART_HOURS = 62 * 24;

/**
 * p99 and the longest hold per hour, against the current and the recommended
 * TTL: how close each hour came. Hours without data are gaps, not bridged by a
 * line; the hour axis is labelled every six hours at most; the y axis is
 * logarithmic so a 140 ms p99 under a 5 min TTL still reads. At most
 * {@link MAX_CHART_HOURS} hours, the latest, whatever the span of the data.
 */
export function hourlySpec(p: PatternAnalysis): TopLevelSpec {
  const HOUR = 3_600_000;
  const newest = p.hourly.at(-1)?.hourStartMs ?? 0;
  const shown = p.hourly.filter((h) => h.hourStartMs > newest - MAX_CHART_HOURS * HOUR);
  const byHour = new Map(shown.map((h) => [h.hourStartMs, h]));
  const first = shown[0]?.hourStartMs ?? 0;
  const values: { hour: number; series: string; ms: number | null }[] = [];
  // Counted in steps, never `hour += HOUR` until `newest`: from 2^75 ms on, an hour added changes nothing, and
  // such a loop never ended (a Prometheus point at 1e20 s ran a report out of memory). At most MAX_CHART_HOURS.
  const steps = shown.length === 0 ? 0 : Math.min(MAX_CHART_HOURS, Math.floor((newest - first) / HOUR) + 1);
  for (let step = 0; step < steps; step++) {
    const hour = first + step * HOUR;
    const h = byHour.get(hour);
    values.push({ hour, series: 'p99', ms: h ? Math.max(h.p99Ms, 0.001) : null });
    values.push({ hour, series: 'longest hold', ms: h ? Math.max(h.maxMs, 0.001) : null });
  }
  const spanHours = (newest - first) / HOUR;
  const ticks =
    spanHours <= 4 * 24
      ? { tickCount: { interval: 'hours', step: 6 }, format: '%b %d %H:00' }
      : { tickCount: { interval: spanHours <= 21 * 24 ? 'date' : 'week', step: 1 }, format: '%b %d' };
  const hidden = p.hourly.length - shown.length;
  const title = hidden > 0
    ? `Hold time per hour (UTC) against the TTL: the last ${MAX_CHART_HOURS / 24} days (${hidden} earlier ${hidden === 1 ? 'hour' : 'hours'} with data not shown)`
    : 'Hold time per hour (UTC) against the TTL';
  const lines = [
    { name: `${p.lease ? 'lease in use' : 'current TTL'} ${formatMs(p.ttl.currentMs)}`, ms: Math.max(p.ttl.currentMs, 0.001), color: VERDICT_COLOR[p.verdict], dash: [] as number[] },
    { name: `recommended ${p.lease ? 'lease ' : ''}${formatMs(p.recommendedTtlMs)}`, ms: p.recommendedTtlMs, color: '#2e7d32', dash: [8, 3] },
  ];
  const series = ['p99', 'longest hold'];
  const y = { type: 'quantitative', scale: { type: 'log', padding: 8 }, title: 'ms (log scale)' } as const;
  const color = {
    field: 'name',
    type: 'nominal',
    title: null,
    scale: { domain: [...series, ...lines.map((l) => l.name)], range: ['#1565c0', '#90a4ae', ...lines.map((l) => l.color)] },
    // Lines in the legend, as in the chart (the points on the lines would otherwise make them dots).
    legend: { symbolType: 'stroke', symbolStrokeWidth: 2 },
  } as const;
  return {
    ...base,
    width: WIDTH,
    height: 160,
    title: { text: title, anchor: 'start', fontSize: 12 },
    layer: [
      {
        data: { values },
        transform: [{ calculate: 'datum.series', as: 'name' }],
        // Small points too: an hour alone (a short window, or one between gaps) has no line to draw.
        mark: { type: 'line', interpolate: 'step-after', invalid: 'break-paths-filter-domains', strokeWidth: 1.5, point: { size: 22, filled: true } },
        encoding: {
          x: {
            field: 'hour',
            type: 'temporal',
            title: null,
            scale: { type: 'utc' },
            axis: { ...ticks, labelAngle: 0 },
          },
          y: { ...y, field: 'ms' },
          color,
        },
      },
      {
        data: { values: lines },
        mark: { type: 'rule', strokeWidth: 2 },
        encoding: {
          y: { ...y, field: 'ms' },
          color,
          strokeDash: { field: 'name', type: 'nominal', legend: null, scale: { domain: lines.map((l) => l.name), range: lines.map((l) => l.dash) } },
        },
      },
    ],
  } as TopLevelSpec;
}
