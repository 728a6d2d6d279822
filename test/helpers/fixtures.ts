import { join } from 'node:path';
import { generateDatabase, type GenerateOptions } from '../../fixtures/generate.js';
import { queryDb } from './db.js';

/** Builds a generated samples database in `dir` and returns its path. */
export function buildDb(dir: string, name: string, options: Omit<GenerateOptions, 'path'> = {}): string {
  const path = join(dir, name);
  generateDatabase({ path, ...options });
  return path;
}

/** Exact nearest-rank percentile of sorted integers, in integer arithmetic. */
export function nearestRankExact(sorted: readonly number[], percentile: number): number {
  const perHundredThousand = Math.round(percentile * 1000);
  const rank = Math.max(1, Math.ceil((perHundredThousand * sorted.length) / 100_000));
  return sorted[rank - 1]!;
}

/** Hold times (µs) of one pattern from the raw rows, sorted: the ground truth. */
export function rawHoldTimes(paths: readonly string[], pattern: string, where = '1 = 1'): number[] {
  return paths
    .flatMap((path) =>
      queryDb<{ hold_us: number }>(path, `SELECT hold_us FROM samples WHERE pattern = ? AND hold_us IS NOT NULL AND ${where}`, pattern),
    )
    .map((r) => r.hold_us)
    .sort((a, b) => a - b);
}
