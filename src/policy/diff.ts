type Op = { op: ' ' | '-' | '+'; line: string };

/**
 * A unified diff of two texts (a policy file, a source file whose TTL literals
 * changed), by the shortest edit script of their lines: `--- a/name` / `+++ b/name` headers and hunks with
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
  const out = [`--- ${diffName('a/', path)}`, `+++ ${diffName('b/', path)}`];
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

/**
 * A file's name in a diff header, as git writes it: quoted, with C escapes, when it holds a control
 * character, a `"` or a `\\` — so a name with a newline cannot forge a `---`/`+++` line, nor an ESC
 * reach the terminal — and `git apply` reads it back.
 */
export function diffName(prefix: string, path: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/[\u0000-\u001f\u007f"\\]/.test(path)) return prefix + path;
  const named: Record<string, string> = { '\u0007': 'a', '\b': 'b', '\t': 't', '\n': 'n', '\v': 'v', '\f': 'f', '\r': 'r', '"': '"', '\\': '\\' };
  // eslint-disable-next-line no-control-regex
  const escaped = (prefix + path).replace(/[\u0000-\u001f\u007f"\\]/g, (c) => `\\${named[c] ?? c.charCodeAt(0).toString(8).padStart(3, '0')}`);
  return `"${escaped}"`;
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

/**
 * Edits beyond which the script is not searched for: the lines between the common head and tail are
 * then replaced whole (a diff `git apply` takes all the same). Edits of TTL literals change a few lines.
 */
const MAX_EDIT_DISTANCE = 2000;

/**
 * The edit script of `a` into `b`: the common head and tail kept, the middle by Myers' O((N+M)·D)
 * shortest edit script, keeping of each step's furthest reaches only the band it can touch, so time
 * and memory grow with the size of the change, not with the files' (a table of every pair of lines
 * cost a 20,000-line file 1.66 GB).
 */
function lineOps(a: readonly string[], b: readonly string[]): Op[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const middle = shortestEdit(midA, midB) ?? [...midA.map((line): Op => ({ op: '-', line })), ...midB.map((line): Op => ({ op: '+', line }))];
  return [...a.slice(0, head).map((line): Op => ({ op: ' ', line })), ...middle, ...a.slice(a.length - tail).map((line): Op => ({ op: ' ', line }))];
}

/** Myers' shortest edit script of `a` into `b` (deletions before insertions), or `undefined` past {@link MAX_EDIT_DISTANCE}. */
function shortestEdit(a: readonly string[], b: readonly string[]): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  // reach[d][k + d]: the furthest x on diagonal k (x − y) with d edits.
  const reach: Int32Array[] = [];
  const limit = Math.min(n + m, MAX_EDIT_DISTANCE);
  for (let d = 0; d <= limit; d++) {
    const prev = reach[d - 1];
    const row = new Int32Array(2 * d + 1);
    for (let k = -d; k <= d; k += 2) {
      // Down (an insertion) from diagonal k + 1, or right (a deletion) from k − 1, whichever reached further.
      let x = d === 0 ? 0 : k === -d || (k !== d && prev![k - 1 + d - 1]! < prev![k + 1 + d - 1]!) ? prev![k + 1 + d - 1]! : prev![k - 1 + d - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      row[k + d] = x;
      if (x >= n && y >= m) {
        reach.push(row);
        return backtrack(reach, a, b);
      }
    }
    reach.push(row);
  }
  return undefined;
}

/** The script, read back from the end through each step's reaches. */
function backtrack(reach: readonly Int32Array[], a: readonly string[], b: readonly string[]): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = reach.length - 1; d > 0; d--) {
    const prev = reach[d - 1]!;
    const k = x - y;
    const down = k === -d || (k !== d && prev[k - 1 + d - 1]! < prev[k + 1 + d - 1]!);
    const fromK = down ? k + 1 : k - 1;
    const fromX = prev[fromK + d - 1]!;
    const fromY = fromX - fromK;
    // The snake after the edit, then the edit itself.
    const startX = down ? fromX : fromX + 1;
    while (x > startX) {
      ops.push({ op: ' ', line: a[--x]! });
      y--;
    }
    if (down) ops.push({ op: '+', line: b[--y]! });
    else ops.push({ op: '-', line: a[--x]! });
    x = fromX;
    y = fromY;
  }
  while (x > 0) ops.push({ op: ' ', line: a[--x]! });
  return ops.reverse();
}
