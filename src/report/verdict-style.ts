import type { Verdict } from '../analyze/verdict.js';

/** How each verdict reads in every report: a label, a mark for Markdown, a colour for HTML. */
export const VERDICT_LABEL: Readonly<Record<Verdict, string>> = Object.freeze({
  expired: 'expired',
  'lease-at-risk': 'lease at risk',
  'too-short': 'too short',
  'too-long': 'too long',
  'lease-too-long': 'lease too long',
  'below-floor': 'below floor',
  ok: 'ok',
  'insufficient-data': 'insufficient data',
});

export const VERDICT_MARK: Readonly<Record<Verdict, string>> = Object.freeze({
  expired: '🔴',
  'lease-at-risk': '🔴',
  'too-short': '🟠',
  'too-long': '🟡',
  'lease-too-long': '🟡',
  'below-floor': '🔵',
  ok: '🟢',
  'insufficient-data': '⚪',
});

export const VERDICT_COLOR: Readonly<Record<Verdict, string>> = Object.freeze({
  expired: '#c62828',
  'lease-at-risk': '#c62828',
  'too-short': '#ef6c00',
  'too-long': '#b59400',
  'lease-too-long': '#b59400',
  'below-floor': '#5c6bc0',
  ok: '#2e7d32',
  'insufficient-data': '#757575',
});
