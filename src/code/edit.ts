import { accessSync, constants, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, relative, sep } from 'node:path';
import { TtlAdvisorError } from '../errors.js';
import { printable } from '../text.js';
import type { LiteralSpan } from './types.js';

/**
 * The new text of a TTL literal, in the style it was written in: only the
 * literal's characters change.
 *
 * - `5000` → `16100`; numeric separators are kept where the original used them: `5_000` → `16_100`;
 * - a product keeps its unit: `5 * 1000` → `16.2 * 1000`, `2 * 60 * 1000` → `30 * 60 * 1000`, and
 *   `5 * 60 * 1000` → `3 * 1000` (leading factors give way until the new value is a number ≥ 1 with
 *   at most one decimal times the rest, whole as JavaScript multiplies it; else the product becomes
 *   the number of milliseconds: `16.1 * 1000` would be 16100.000000000002, which Redis refuses);
 * - anything else (`5e3`, a sum) becomes the number of milliseconds.
 */
export function literalText(original: string, toMs: number): string {
  // A number written as a string (`process.env.X ?? '5000'`) stays a string, in its quotes.
  const quoted = /^(['"`])(.*)\1$/s.exec(original);
  if (quoted) return `${quoted[1]}${literalText(quoted[2]!, toMs)}${quoted[1]}`;
  const separators = original.includes('_');
  // A product of literals: keep its unit factors, change the leading one (`5 * 60 * 1000` → `3 * 1000`).
  const factors = /^[\d_.\s*]+$/.test(original) && original.includes('*') ? original.split('*') : [];
  const values = factors.map((f) => Number(f.trim().replace(/_/g, '')));
  if (values.length > 1 && values.every((v) => Number.isFinite(v) && v > 0)) {
    // The factor that counts (the 15 of `1000 * 60 * 15`, the 5 of `5 * 60 * 1000`) changes in place, rounded up to one decimal.
    const counting = values.findIndex((v) => !UNIT_FACTORS.has(v));
    if (counting >= 0 && values.filter((v) => !UNIT_FACTORS.has(v)).length === 1) {
      const rest = values.reduce((a, b, i) => (i === counting ? a : a * b), 1);
      const factor = Math.ceil((toMs / rest) * 10 - 1e-9) / 10;
      // The product as JavaScript computes it must be whole: Redis refuses `16.1 * 1000` (16100.000000000002).
      if (factor >= 1 && Number.isInteger(factor * rest)) {
        const [lead, tail] = [/^\s*/.exec(factors[counting]!)![0], /\s*$/.exec(factors[counting]!)![0]];
        return factors.map((f, i) => (i === counting ? `${lead}${formatNumber(factor, separators)}${tail}` : f)).join('*');
      }
    }
    for (let k = 0; k < values.length - 1; k++) {
      const rest = values.slice(k + 1).reduce((a, b) => a * b, 1);
      const factor = Math.round((toMs / rest) * 10) / 10;
      if (factor >= 1 && factor * rest === toMs) {
        const lead = /^\s*/.exec(factors[0]!)![0];
        const tail = /\s*$/.exec(factors[k]!)![0];
        return `${lead}${formatNumber(factor, separators)}${tail}*${factors.slice(k + 1).join('*')}`;
      }
    }
  }
  return formatNumber(toMs, separators);
}

/** Factors that change a unit (ms per second, seconds per minute…), as opposed to the count of units. */
const UNIT_FACTORS = new Set([1000, 60, 24, 3600, 60_000, 3_600_000]);

/** The value of a literal as `literalText` writes it: a number, a product of numbers, or either in quotes. */
export function literalValue(text: string): number {
  const bare = text.replace(/^(['"`])(.*)\1$/s, '$2').replace(/_/g, '');
  return bare.split('*').reduce((a, f) => a * Number(f.trim()), 1);
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

/** A file `apply --code` rewrites: where it really is, its name from the repository's root, and its text before and after (its BOM kept). */
export interface PlannedFile {
  /** The file itself (a symlink's target), inside the repository. */
  target: string;
  /** The path from the repository's root, as the diff names it. */
  name: string;
  before: string;
  after: string;
}

/** What `apply --code` may write, read through `fs` (the real file system by default). */
export interface EditFs {
  read(path: string): Buffer;
  realpath(path: string): string;
  writable(path: string): boolean;
}

const REAL_FS: EditFs = {
  read: (path) => readFileSync(path),
  realpath: (path) => realpathSync(path),
  writable: (path) => {
    try {
      accessSync(path, constants.W_OK);
      return (statSync(path).mode & 0o222) !== 0;
    } catch {
      return false;
    }
  },
};

/**
 * The files' texts with the edits made, every file checked before any is written (all or nothing), each
 * refusal one line naming the file: a file that resolves (through a symlink) outside the repository
 * `root`; text that is not UTF-8 (UTF-16, other encodings: the literal's offsets are the compiler's,
 * in UTF-8 text — a UTF-8 BOM is kept); a file or folder that cannot be written; a literal that no
 * longer reads as scanned (the file changed under us).
 */
export function planLiteralEdits(edits: readonly LiteralEdit[], root: string, fs: EditFs = REAL_FS): PlannedFile[] {
  const byPath = new Map<string, LiteralEdit[]>();
  for (const e of edits) byPath.set(e.literal.path, [...(byPath.get(e.literal.path) ?? []), e]);
  const realRoot = fs.realpath(root);
  const planned: PlannedFile[] = [];
  for (const [path, list] of byPath) {
    const target = fs.realpath(path);
    const inside = relative(realRoot, target);
    if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
      throw new TtlAdvisorError(`${printable(relative(realRoot, path))} resolves to ${printable(target)}, outside the repository (${printable(realRoot)}): apply --code writes nothing outside it; nothing was written`);
    }
    if (!fs.writable(target) || !fs.writable(dirname(target))) {
      throw new TtlAdvisorError(`${printable(inside)} cannot be written (read-only, or its folder is); nothing was written`);
    }
    const { text, bom } = decodeSource(fs.read(target), inside);
    let after = text;
    // From the end, so earlier offsets stay valid.
    for (const e of [...list].sort((a, b) => b.literal.start - a.literal.start)) {
      if (after.slice(e.literal.start, e.literal.end) !== e.literal.text) {
        throw new TtlAdvisorError(`${printable(inside)} changed while it was read: expected ${e.literal.text} at offset ${e.literal.start}; nothing was written`);
      }
      after = after.slice(0, e.literal.start) + e.text + after.slice(e.literal.end);
    }
    // The diff names the file the link leads to: `git apply` patches files, not links.
    planned.push({ target, name: inside.split(sep).join('/'), before: bom + text, after: bom + after });
  }
  return planned;
}

/** A source file's text as the compiler read it (a UTF-8 BOM apart), or a refusal saying what it is. */
function decodeSource(bytes: Buffer, name: string): { text: string; bom: string } {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    throw new TtlAdvisorError(`${printable(name)} is UTF-16 text: apply --code edits UTF-8 files only (change its TTL by hand, or convert it); nothing was written`);
  }
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? '\ufeff' : '';
  try {
    return { text: UTF8.decode(bom ? bytes.subarray(3) : bytes), bom };
  } catch {
    throw new TtlAdvisorError(`${printable(name)} is not UTF-8 text: apply --code edits UTF-8 files only (change its TTL by hand); nothing was written`);
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Writes the planned files, each atomically (see `write`); when one fails after others were written,
 * those are put back as they were, so the edit stays all or nothing.
 */
export function writePlannedFiles(files: readonly PlannedFile[], write: (path: string, text: string) => void): void {
  const written: PlannedFile[] = [];
  try {
    for (const f of files) {
      write(f.target, f.after);
      written.push(f);
    }
  } catch (error) {
    for (const f of written.reverse()) {
      try {
        write(f.target, f.before);
      } catch {
        // the first error is the one to report; a file that cannot be put back is as the edit left it
      }
    }
    throw error;
  }
}
