type Op = { op: ' ' | '-' | '+'; line: string };

/**
 * A unified diff of two small texts (policy files), by longest common
 * subsequence of lines: `--- a/name` / `+++ b/name` headers and hunks with
 * their line ranges (`@@ -12,7 +12,7 @@`) and `context` lines around each
 * change, as `git diff` writes them, so `git apply` takes it. `name` is the
 * path from the repository's root (a leading `./` is dropped). Empty when
 * the texts are equal.
 */
export function unifiedDiff(before: string, after: string, name: string, context = 3): string {
  const ops = lineOps(lines(before), lines(after));
  const changes = ops.flatMap((o, k) => (o.op === ' ' ? [] : [k]));
  if (changes.length === 0) return '';
  const path = name.replace(/^(\.\/)+/, '');
  const out = [`--- a/${path}`, `+++ b/${path}`];
  // Hunks: each change with `context` lines either side, merged when they touch.
  const hunks: [number, number][] = [];
  for (const k of changes) {
    const start = Math.max(0, k - context);
    const end = Math.min(ops.length, k + context + 1);
    const last = hunks.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else hunks.push([start, end]);
  }
  // Line numbers (1-based) in each text where an op index starts.
  const aAt: number[] = [];
  const bAt: number[] = [];
  let a = 1;
  let b = 1;
  for (const o of ops) {
    aAt.push(a);
    bAt.push(b);
    if (o.op !== '+') a++;
    if (o.op !== '-') b++;
  }
  for (const [start, end] of hunks) {
    const slice = ops.slice(start, end);
    const aCount = slice.filter((o) => o.op !== '+').length;
    const bCount = slice.filter((o) => o.op !== '-').length;
    // An empty range names the line before it, as diff does.
    const aStart = aCount === 0 ? aAt[start]! - 1 : aAt[start]!;
    const bStart = bCount === 0 ? bAt[start]! - 1 : bAt[start]!;
    out.push(`@@ -${range(aStart, aCount)} +${range(bStart, bCount)} @@`);
    for (const o of slice) {
      // A last line without its newline is marked, as diff does (see `lines`).
      if (o.line.endsWith(NO_NEWLINE)) out.push(`${o.op}${o.line.slice(0, -NO_NEWLINE.length)}`, '\\ No newline at end of file');
      else out.push(`${o.op}${o.line}`);
    }
  }
  return out.join('\n') + '\n';
}

function range(start: number, count: number): string {
  return count === 1 ? `${start}` : `${start},${count}`;
}

/** Marks a last line that has no newline, so it differs from the same text with one. */
const NO_NEWLINE = '\u0000no-newline';

function lines(text: string): string[] {
  if (text === '') return [];
  const all = text.replace(/\n$/, '').split('\n');
  if (!text.endsWith('\n')) all[all.length - 1] += NO_NEWLINE;
  return all;
}

/** The edit script of `a` into `b`, by longest common subsequence (policy files are small). */
function lineOps(a: string[], b: string[]): Op[] {
  // lcs[i][j] = length of the LCS of a[i…] and b[j…]
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      ops.push({ op: ' ', line: a[i++]! });
      j++;
    } else if (i < a.length && (j === b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) ops.push({ op: '-', line: a[i++]! });
    else ops.push({ op: '+', line: b[j++]! });
  }
  return ops;
}
