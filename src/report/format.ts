import type { Verdict } from '../analyze/analyze.js';

/** Milliseconds for people: `850 µs`, `12.3 ms`, `4.2 s`, `3 min`. */
export function formatMs(ms: number): string {
  if (ms < 1) return `${Math.round(ms * 1000)} µs`;
  if (ms < 100) return `${Number(ms.toFixed(1))} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(2))} s`;
  return `${Number((ms / 60_000).toFixed(1))} min`;
}

/** A count with thousands separators: 12,345. */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** A UTC time to the minute: `2026-11-30 08:00 UTC`. */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
}

/** A duration in hours or minutes: `48.0 h`, `35 min`. */
export function formatSpan(ms: number): string {
  const hours = ms / 3_600_000;
  return hours >= 1 ? `${hours.toFixed(1)} h` : `${Math.round(ms / 60_000)} min`;
}

/**
 * Keys and patterns are untrusted: control characters (newlines, escapes, NUL)
 * are shown as `\u{…}` so they cannot break a table, a terminal or a log line.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export const VERDICT_LABEL: Readonly<Record<Verdict, string>> = Object.freeze({
  expired: 'expired',
  'too-short': 'too short',
  'too-long': 'too long',
  ok: 'ok',
  'insufficient-data': 'insufficient data',
});

export const VERDICT_MARK: Readonly<Record<Verdict, string>> = Object.freeze({
  expired: '🔴',
  'too-short': '🟠',
  'too-long': '🟡',
  ok: '🟢',
  'insufficient-data': '⚪',
});

export const VERDICT_COLOR: Readonly<Record<Verdict, string>> = Object.freeze({
  expired: '#c62828',
  'too-short': '#ef6c00',
  'too-long': '#b59400',
  ok: '#2e7d32',
  'insufficient-data': '#757575',
});

/** Columns a string takes in a terminal: East Asian wide characters and emoji take two. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) {
    const c = char.codePointAt(0)!;
    const wide =
      (c >= 0x1100 && c <= 0x115f) || (c >= 0x2e80 && c <= 0xa4cf) || (c >= 0xac00 && c <= 0xd7a3) ||
      (c >= 0xf900 && c <= 0xfaff) || (c >= 0xfe30 && c <= 0xfe4f) || (c >= 0xff00 && c <= 0xff60) ||
      (c >= 0xffe0 && c <= 0xffe6) || (c >= 0x1f300 && c <= 0x1faff) || (c >= 0x20000 && c <= 0x3fffd);
    width += wide ? 2 : 1;
  }
  return width;
}

/** Pads to a display width (see {@link displayWidth}), on the right or the left. */
export function pad(text: string, width: number, align: 'left' | 'right' = 'left'): string {
  const fill = ' '.repeat(Math.max(0, width - displayWidth(text)));
  return align === 'left' ? text + fill : fill + text;
}
