/**
 * The pattern among `candidates` closest to `pattern` by edit distance, when it is
 * close enough to be a misspelling of it (at most a quarter of its length, and at
 * least 1 and at most 8 edits); `undefined` otherwise. Ties go to the first.
 */
export function closestPattern(pattern: string, candidates: readonly string[]): string | undefined {
  const limit = Math.min(8, Math.max(1, Math.floor(pattern.length / 4)));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    if (candidate === pattern || Math.abs(candidate.length - pattern.length) >= bestDistance) continue;
    const distance = editDistance(pattern, candidate, bestDistance);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein distance of two strings, or `cap` as soon as it reaches it (patterns are short). */
function editDistance(a: string, b: string, cap = Number.POSITIVE_INFINITY): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current.push(value);
      if (value < rowMin) rowMin = value;
    }
    if (rowMin >= cap) return cap;
    previous = current;
  }
  return previous[b.length]!;
}
