/**
 * A unified diff of two small texts (policy files), by longest common
 * subsequence of lines, with `context` lines around each change.
 */
export function unifiedDiff(before: string, after: string, name: string, context = 1): string {
  const a = before.replace(/\n$/, '').split('\n');
  const b = after.replace(/\n$/, '').split('\n');
  // lcs[i][j] = length of the LCS of a[i…] and b[j…]
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const ops: { op: ' ' | '-' | '+'; line: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) ops.push({ op: ' ', line: a[i++]! }), j++;
    else if (i < a.length && (j === b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) ops.push({ op: '-', line: a[i++]! });
    else ops.push({ op: '+', line: b[j++]! });
  }
  if (!ops.some((o) => o.op !== ' ')) return '';
  const keep = ops.map((_, k) => ops.slice(Math.max(0, k - context), k + context + 1).some((n) => n.op !== ' '));
  const out = [`--- ${name}`, `+++ ${name}`];
  let skipped = false;
  for (const [k, o] of ops.entries()) {
    if (!keep[k]) {
      if (!skipped) out.push('@@');
      skipped = true;
      continue;
    }
    skipped = false;
    out.push(`${o.op}${o.line}`);
  }
  return out.join('\n') + '\n';
}
