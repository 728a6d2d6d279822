/** Small helpers shared by the benchmarks: medians and a uniform way to print and keep figures. */

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Median, and the spread over repeats: min and max, each rounded to `digits`. */
export function spread(values: readonly number[], digits: number): { median: number; min: number; max: number } {
  return { median: round(median(values), digits), min: round(Math.min(...values), digits), max: round(Math.max(...values), digits) };
}

export function formatRate(perSecond: number): string {
  return perSecond >= 1e6 ? `${round(perSecond / 1e6, 2)} M/s` : perSecond >= 1e3 ? `${round(perSecond / 1e3, 1)} k/s` : `${round(perSecond, 1)}/s`;
}

export function log(line: string): void {
  process.stdout.write(line + '\n');
}
