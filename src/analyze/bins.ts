import type { DenseHistogram } from '../store/histogram/histogram.js';

/** A range of values (ms) and how many fell in it: a bar of a log-scale chart. */
export interface DistributionBin {
  lowMs: number;
  highMs: number;
  count: number;
}

/**
 * Folds a histogram's fine buckets into about ten bins per decade, for a log-scale chart: each bucket
 * by its low edge less `shiftMs` (lateness read from gaps: the gap past the period), at least `minMs`
 * (a log scale has no 0).
 */
export function logBins(histogram: DenseHistogram, minMs: number, shiftMs = 0): DistributionBin[] {
  const bins = new Map<number, DistributionBin>();
  for (const bucket of histogram.buckets()) {
    const valueMs = Math.max(bucket.lowUs / 1000 - shiftMs, minMs);
    const slot = Math.floor(Math.log10(valueMs) * 10);
    let bin = bins.get(slot);
    if (!bin) bins.set(slot, (bin = { lowMs: 10 ** (slot / 10), highMs: 10 ** ((slot + 1) / 10), count: 0 }));
    bin.count += bucket.count;
  }
  return [...bins.values()].sort((a, b) => a.lowMs - b.lowMs);
}

/** The value counted most often (the smaller on a tie), or `fallback` when none was. */
export function mostCommon(counts: ReadonlyMap<number, number>, fallback: number): number {
  let best = fallback;
  let most = -1;
  for (const [value, n] of counts) if (n > most || (n === most && value < best)) [best, most] = [value, n];
  return best;
}
