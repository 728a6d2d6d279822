import { TtlAdvisorError } from '../errors.js';
import type { LiteralSpan } from './types.js';

/**
 * The new text of a TTL literal, in the style it was written in: only the
 * literal's characters change.
 *
 * - `5000` → `16100`; numeric separators are kept where the original used them: `5_000` → `16_100`;
 * - a product keeps its unit: `5 * 1000` → `16.1 * 1000`, `2 * 60 * 1000` → `30 * 60 * 1000`, and
 *   `5 * 60 * 1000` → `3 * 1000` (leading factors give way until the new value is a number ≥ 1 with
 *   at most one decimal times the rest; else the product becomes the number of milliseconds);
 * - anything else (`5e3`, a sum) becomes the number of milliseconds.
 */
export function literalText(original: string, toMs: number): string {
  const separators = original.includes('_');
  // A product of literals: keep its unit factors, change the leading one (`5 * 60 * 1000` → `3 * 1000`).
  const factors = /^[\d_.\s*]+$/.test(original) && original.includes('*') ? original.split('*') : [];
  const values = factors.map((f) => Number(f.trim().replace(/_/g, '')));
  if (values.length > 1 && values.every((v) => Number.isFinite(v) && v > 0)) {
    for (let k = 0; k < values.length - 1; k++) {
      const rest = values.slice(k + 1).reduce((a, b) => a * b, 1);
      const factor = Math.round((toMs / rest) * 10) / 10;
      if (factor >= 1 && Math.abs(factor * rest - toMs) < 1e-6) {
        const lead = /^\s*/.exec(factors[0]!)![0];
        const tail = /\s*$/.exec(factors[k]!)![0];
        return `${lead}${formatNumber(factor, separators)}${tail}*${factors.slice(k + 1).join('*')}`;
      }
    }
  }
  return formatNumber(toMs, separators);
}

function formatNumber(n: number, separators: boolean): string {
  const [whole, fraction] = String(n).split('.');
  const grouped = separators && whole!.length > 3 ? whole!.replace(/\B(?=(\d{3})+(?!\d))/g, '_') : whole!;
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

/** One literal replaced by new text. */
export interface LiteralEdit {
  literal: LiteralSpan;
  text: string;
}

/**
 * The files' texts with the edits made, by path; an edit whose literal no longer
 * reads as scanned is refused (the file changed under us).
 */
export function applyLiteralEdits(edits: readonly LiteralEdit[], read: (path: string) => string): Map<string, { before: string; after: string }> {
  const byPath = new Map<string, LiteralEdit[]>();
  for (const e of edits) byPath.set(e.literal.path, [...(byPath.get(e.literal.path) ?? []), e]);
  const out = new Map<string, { before: string; after: string }>();
  for (const [path, list] of byPath) {
    const before = read(path);
    let after = before;
    // From the end, so earlier offsets stay valid.
    for (const e of [...list].sort((a, b) => b.literal.start - a.literal.start)) {
      if (after.slice(e.literal.start, e.literal.end) !== e.literal.text) throw new TtlAdvisorError(`${path} changed while it was read: expected ${e.literal.text} at offset ${e.literal.start}`);
      after = after.slice(0, e.literal.start) + e.text + after.slice(e.literal.end);
    }
    out.set(path, { before, after });
  }
  return out;
}
