import type { Verdict } from '../analyze/verdict.js';

/** How each verdict reads in every report: a label, a mark for Markdown, a colour for HTML. */
export const VERDICT_LABEL: Readonly<Record<Verdict, string>> = Object.freeze({
  expired: 'expired',
  'too-short': 'too short',
  'too-long': 'too long',
  'below-floor': 'below floor',
  ok: 'ok',
  'insufficient-data': 'insufficient data',
});

export const VERDICT_MARK: Readonly<Record<Verdict, string>> = Object.freeze({
  expired: '🔴',
  'too-short': '🟠',
  'too-long': '🟡',
  'below-floor': '🔵',
  ok: '🟢',
  'insufficient-data': '⚪',
});

export const VERDICT_COLOR: Readonly<Record<Verdict, string>> = Object.freeze({
  expired: '#c62828',
  'too-short': '#ef6c00',
  'too-long': '#b59400',
  'below-floor': '#5c6bc0',
  ok: '#2e7d32',
  'insufficient-data': '#757575',
});
