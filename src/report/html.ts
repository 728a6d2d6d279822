import type { Analysis } from '../analyze/analyze.js';
import { MIN_SAMPLES_FOR_P99 } from '../analyze/confidence.js';
import type { PatternAnalysis } from '../analyze/summarize.js';
import { escapeHtml, ownCopy, printable } from '../text.js';
import { formatCount, formatMs, formatTime } from '../units.js';
import { distributionSpec, hourlySpec, overviewSpec } from './charts.js';
import { hintSentences, warningSentences } from './hint-text.js';
import { learnedText, unattributedText } from './pattern-text.js';
import { beyondBucketsText, bound, findingText, recommendationText, tooFewHoldTimesText, unconfirmedText } from './decision-text.js';
import { describeRun } from './markdown.js';
import { leaseLatenessSpec, leaseMarginSpec } from './lease-charts.js';
import { leaseFormulaText } from './lease-text.js';
import { riskSentences } from './risk-text.js';
import { renderSvg } from './render-svg.js';
import { FINDING_PLACES } from './finding-style.js';
import { VERDICT_COLOR, VERDICT_LABEL } from './verdict-style.js';

// No script, no remote anything: the page is one self-contained file.
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

const text = (value: string) => escapeHtml(printable(value));
/** Our own sentences: escaped, then their `code` spans (flags, commands) set as code. */
const prose = (value: string) => text(value).replace(/`([^`]+)`/g, '<code>$1</code>');

/**
 * The HTML report: a summary table, worst first, an overview chart, then one
 * section per pattern with its numbers, the formula and two charts. Charts are
 * rendered to inline SVG here, so the file opens offline.
 */
export async function renderHtml(analysis: Analysis): Promise<string> {
  const sections: string[] = [];
  // Each section as a string of its own: built by concatenation, it was a tree of its pieces that held about
  // three times its size until the page was joined (1,000 patterns: 1.67 GB peak against 1.12 GB).
  for (const [i, p] of analysis.patterns.entries()) sections.push(ownCopy(await patternSection(p, i, analysis)));
  const overview = analysis.patterns.length
    ? `<figure class="chart">${await renderSvg(overviewSpec(analysis))}<figcaption>○ current TTL &nbsp; ◆ recommended TTL &nbsp; ▏hold-time p99 &nbsp;·&nbsp; the bar spans current → recommended; bar and diamond take the verdict's colour, named after each pattern</figcaption></figure>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ttl-advisor report</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>Lock TTLs from measured hold times</h1>
<p class="run">${text(describeRun(analysis))}</p>
${warningSentences(analysis).map((w) => `<p class="warning">⚠️ ${text(w)}</p>`).join('\n')}
</header>
<main>
${unconfirmedSection(analysis)}
${analysis.unattributed ? `<p class="warning">${text(unattributedText(analysis.unattributed))}</p>` : ''}
${analysis.patterns.length ? summaryTable(analysis) : analysis.unconfirmed.length ? '' : '<p class="empty">No samples in this window yet. Wrap your locks with a recorder, let them run for a day or two, and run <code>ttl-advisor report</code> again.</p>'}
${overview}
${sections.join('\n')}
</main>
<footer>
<p>Generated ${text(formatTime(analysis.generatedAtMs))} by ttl-advisor from ${analysis.sources.map((s) => `<code>${text(s)}</code>`).join(', ')}.
Percentiles are nearest-rank, from histograms exact to 0.1 %. A pattern needs ${MIN_SAMPLES_FOR_P99} hold-time samples before its p99 holds at 95 % confidence.</p>
</footer>
</body>
</html>
`;
}

function badge(p: PatternAnalysis, label: string = VERDICT_LABEL[p.verdict]): string {
  return `<span class="badge" style="background:${VERDICT_COLOR[p.verdict]}">${label}</span>`;
}

/** The verdict with its expirations counted: "46 expired", never "lost" (`lost` is its own outcome). */
function verdictCell(p: PatternAnalysis): string {
  const expired = p.outcomes.expired;
  if (expired === 0) return badge(p);
  if (p.verdict === 'expired') return badge(p, `${formatCount(expired)} expired`);
  return `${badge(p)} <span class="expired-count">${formatCount(expired)} expired</span>`;
}

/** Patterns `watch` saw only expire, never released: first, in a section of their own (they are no advice). */
function unconfirmedSection(analysis: Analysis): string {
  if (analysis.unconfirmed.length === 0) return '';
  const items = analysis.unconfirmed.map((u) => `<li><span class="pattern">${text(u.pattern)}</span>: ${prose(unconfirmedText(u))}</li>`);
  return `<section class="unconfirmed">
<h2>Expired, never released</h2>
<p>Seen by <code>ttl-advisor watch</code>; their true hold times are unknown, so they get no recommendation.</p>
<ul>${items.join('')}</ul>
</section>`;
}

/** The recommendation, in bold only when it is advice: with too little data the cell shows the need instead. */
function recommendationCell(p: PatternAnalysis): string {
  const rec = recommendationText(p.decision, p.holdCount, MIN_SAMPLES_FOR_P99);
  return rec.advice ? `<td class="rec">${rec.text}</td>` : `<td class="need">${rec.text}</td>`;
}

function summaryTable(analysis: Analysis): string {
  const rows = analysis.patterns.map(
    (p, i) => `<tr>
<td class="pattern"><a href="#p-${i}">${text(p.pattern)}</a></td>
<td>${p.incompleteHours > 0 ? '≥ ' : ''}${formatCount(p.count)}</td>
<td>${bound(p.holdMs.p50, p.holdLowerBound.p50)}</td>
<td>${bound(p.holdMs.p99, p.holdLowerBound.p99)}</td>
<td>${bound(p.holdMs.max, p.holdLowerBound.max)}</td>
<td>${formatMs(p.ttl.currentMs)}</td>
${recommendationCell(p)}
<td class="verdict">${verdictCell(p)}</td>
</tr>`,
  );
  return `<table class="summary">
<thead><tr><th>pattern</th><th>samples</th><th>p50</th><th>p99</th><th>max</th><th>current TTL</th><th>recommended TTL</th><th>verdict</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>`;
}

function formula(p: PatternAnalysis, analysis: Analysis): string {
  const { multiplier, floorMs, stepMs, cover } = analysis.policy;
  if (p.lease) {
    const l = p.lease;
    if (p.decision.insufficient) return `A lease (renewed while held): no advice yet, ${formatCount(l.renewals)} of ${formatCount(MIN_SAMPLES_FOR_P99)} renewals needed.`;
    return `A lease (renewed while held), advised from renewal lateness: ${prose(leaseFormulaText(l, floorMs))}`;
  }
  const beyond = p.decision.findings.find((f) => f.kind === 'beyond-buckets');
  if (beyond) return `No recommendation: ${beyondBucketsText(beyond.lastBoundMs)}.`;
  if (p.decision.insufficient) return tooFewHoldTimesText('formula', p.holdCount, MIN_SAMPLES_FOR_P99);
  const atLeast = p.holdLowerBound.p99;
  const scaled = multiplier * p.holdMs.p99;
  const coversMax = cover === 'max' && p.holdMs.max > Math.max(scaled, floorMs);
  const winner = coversMax ? `the longest hold ${formatMs(p.holdMs.max)} (--cover max)` : scaled >= floorMs ? `${multiplier} × p99 = ${bound(scaled, atLeast)}` : `the floor ${formatMs(floorMs)}`;
  const scaledText = `${multiplier} × ${bound(p.holdMs.p99, atLeast)}`;
  return `TTL = ${floorMs > 0 ? `max(${formatMs(floorMs)}, ${scaledText})` : scaledText} → ${winner}, rounded up to ${formatMs(stepMs)} = <strong>${bound(p.recommendedTtlMs, atLeast)}</strong>`;
}

/** The decision's findings that the table does not show (tails beyond the rule, censored holds), then the hints. */
function notes(p: PatternAnalysis): string {
  const findings = p.decision.findings.filter((f) => FINDING_PLACES[f.kind].htmlSection).map((f) => findingText(f));
  const all = [...findings, ...hintSentences(p)];
  return all.length ? `<ul class="hints">${all.map((h) => `<li>${prose(h)}</li>`).join('')}</ul>` : '';
}

async function patternSection(p: PatternAnalysis, index: number, analysis: Analysis): Promise<string> {
  const [distribution, hourly] = await Promise.all([renderSvg(distributionSpec(p)), renderSvg(hourlySpec(p))]);
  const l = p.lease;
  const leaseCharts = l ? await Promise.all([renderSvg(leaseLatenessSpec(l, p.ttl.currentMs)), renderSvg(leaseMarginSpec(l, p.ttl.currentMs))]) : [];
  const facts: [string, string][] = [
    ['samples', `${formatCount(p.count)} (${formatCount(p.holdCount)} held the lock)`],
    ['hold p50 / p90 / p99 / p99.9', (['p50', 'p90', 'p99', 'p999'] as const).map((k) => bound(p.holdMs[k], p.holdLowerBound[k])).join(' / ')],
    ['hold max / mean', `${bound(p.holdMs.max, p.holdLowerBound.max)} / ${bound(p.holdMs.mean, p.holdLowerBound.mean)}`],
    ...(p.censored > 0 ? ([['not seen to end', `${formatCount(p.censored)} hold(s): each at least its TTL`]] as [string, string][]) : []),
    ['p99, 95 % upper bound', p.p99UpperBoundMs === undefined ? `needs ${MIN_SAMPLES_FOR_P99} samples` : formatMs(p.p99UpperBoundMs)],
    ['wait p50 / p99', p.waitCount === 0 ? 'unknown (watched: Redis sees no waiting)' : `${formatMs(p.waitMs.p50)} / ${formatMs(p.waitMs.p99)}`],
    [
      'outcomes',
      `${formatCount(p.outcomes.released)} released, ${formatCount(p.outcomes.expired)} expired, ${formatCount(p.outcomes.not_acquired)} not acquired, ${formatCount(p.outcomes.error)} errors${p.outcomes.lost ? `, ${formatCount(p.outcomes.lost)} lost` : ''}; ${formatCount(p.threw)} threw`,
    ],
    ...(p.extended > 0 ? ([['extended while held', `${formatCount(p.extended)} lock(s), ${formatCount(p.extensions)} extension(s)`]] as [string, string][]) : []),
    ...(l
      ? ([
          ['renewals', `${formatCount(l.renewals)} in ${formatCount(l.holds)} lease(s); gap p50 / p99 / max ${formatMs(l.gapMs.p50)} / ${formatMs(l.gapMs.p99)} / ${formatMs(l.gapMs.max)}`],
          ['lateness p99 / q99.9 / max', `${formatMs(l.latenessMs.p99)} / ${formatMs(l.latenessMs.p999)} / ${formatMs(l.latenessMs.max)} (period ${formatMs(l.periodMs)}, ${l.periodSource})`],
          ['least margin', `${formatMs(l.minMarginMs)}; ${formatCount(l.atRisk)} lease(s) under ${formatMs(l.atRiskBelowMs)}, ${formatCount(l.ranOut)} ran out`],
          ...(l.roundTripMs ? ([['renewal round trip p99 / max', `${formatMs(l.roundTripMs.p99)} / ${formatMs(l.roundTripMs.max)}`]] as [string, string][]) : []),
          ...(l.loopDelayMaxMs !== null ? ([['event loop blocked, longest', formatMs(l.loopDelayMaxMs)]] as [string, string][]) : []),
        ] as [string, string][])
      : []),
    ['TTL in use', p.ttl.minMs === p.ttl.maxMs ? formatMs(p.ttl.currentMs) : `${formatMs(p.ttl.currentMs)} (range ${formatMs(p.ttl.minMs)}–${formatMs(p.ttl.maxMs)})`],
    ['seen', `${formatTime(p.firstMs)} → ${formatTime(p.lastMs)}`],
    ...(p.learned ? ([['pattern', text(learnedText(p.learned)!)]] as [string, string][]) : []),
  ];
  return `<section id="p-${index}">
<h2><span class="pattern">${text(p.pattern)}</span> ${badge(p)}</h2>
<p class="formula">${formula(p, analysis)}</p>
${l ? '' : `<p class="risk">${riskSentences(p).map(text).join(' ')}</p>`}
${notes(p)}
<dl>${facts.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('')}</dl>
<figure class="chart">${distribution}</figure>
<figure class="chart">${hourly}</figure>
${leaseCharts.map((svg) => `<figure class="chart">${svg}</figure>`).join('\n')}
</section>`;
}

const STYLE = `
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; }
* { box-sizing: border-box; }
body { font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); margin: 0 auto; max-width: 980px; padding: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 32px 0 8px; padding-top: 16px; border-top: 1px solid var(--line); display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
.run { color: var(--muted); margin: 0 0 12px; }
.unconfirmed { background: #fdecea; border: 1px solid #c6282855; border-radius: 6px; padding: 4px 12px; margin: 12px 0; }
.unconfirmed h2 { border: 0; margin: 8px 0 4px; padding: 0; color: #c62828; }
.warning { background: #fff8c5; border: 1px solid #d4a72c66; padding: 6px 10px; border-radius: 6px; }
.empty { font-size: 16px; padding: 24px; background: #f6f8fa; border-radius: 6px; }
.pattern { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
table.summary { border-collapse: collapse; width: 100%; margin: 12px 0 24px; font-variant-numeric: tabular-nums; }
.summary th, .summary td { border-bottom: 1px solid var(--line); padding: 6px 8px; text-align: right; vertical-align: top; }
.summary th:first-child, .summary td:first-child, .summary th:last-child, .summary td:last-child { text-align: left; }
.summary td:not(:first-child) { white-space: nowrap; }
.summary th { font-weight: 600; color: var(--muted); font-size: 12px; }
.summary a { color: inherit; }
.summary td.rec { font-weight: 600; }
.summary td.need { color: var(--muted); }
.badge { color: white; border-radius: 10px; padding: 1px 8px; font-size: 12px; font-weight: 600; white-space: nowrap; font-family: system-ui, sans-serif; }
.expired-count { color: #c62828; font-weight: 600; white-space: nowrap; }
.formula { background: #f6f8fa; border-radius: 6px; padding: 8px 12px; font-variant-numeric: tabular-nums; }
.hints li { margin: 2px 0; }
.risk { margin: 8px 0; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0 12px; font-variant-numeric: tabular-nums; }
dt { color: var(--muted); }
dd { margin: 0; }
figure.chart { margin: 8px 0; overflow-x: auto; }
figure.chart svg { max-width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: 12px; }
footer { color: var(--muted); font-size: 12px; margin-top: 40px; border-top: 1px solid var(--line); padding-top: 8px; }
`;
