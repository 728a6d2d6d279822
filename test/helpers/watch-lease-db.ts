import { DenseHistogram } from '../../src/store/histogram/histogram.js';
import { addEncodedRollup } from '../../src/store/histogram/codec.js';
import { LeaseSum } from '../../src/store/rollup.js';
import { LEASE_LIBRARIES, type LeaseLibrary } from '../../src/sample/sample.js';
import { queryDb } from './db.js';

/** A pattern's rollups in a samples database, summed, with the lease part of their blobs. */
export interface PatternLeases {
  count: number;
  released: number;
  expired: number;
  lease: LeaseSum;
}

/** Reads every pattern's rollups, decoding the lease part of each blob (the codec: the analysis may not show leases). */
export function readLeases(path: string): Map<string, PatternLeases> {
  const rows = queryDb<{ pattern: string; count: number; released: number; expired: number; hists: Buffer }>(
    path,
    'SELECT p.pattern, r.count, r.released, r.expired, r.hists FROM rollups r JOIN patterns p ON p.id = r.pattern_id',
  );
  const byPattern = new Map<string, PatternLeases>();
  for (const row of rows) {
    let p = byPattern.get(row.pattern);
    if (!p) byPattern.set(row.pattern, (p = { count: 0, released: 0, expired: 0, lease: new LeaseSum() }));
    p.count += row.count;
    p.released += row.released;
    p.expired += row.expired;
    addEncodedRollup(row.hists, new DenseHistogram(), new DenseHistogram(), new Map(), new DenseHistogram(), p.lease);
  }
  return byPattern;
}

/** A lease part's holds per library, by name. */
export function librariesOf(lease: LeaseSum): Partial<Record<LeaseLibrary, number>> {
  return Object.fromEntries([...lease.libraries].map(([code, holds]) => [LEASE_LIBRARIES[code]!, holds]));
}

/** Every value of a histogram (µs), one per count, in ascending order, each at its bucket's upper edge (≤ 0.1 % high). */
export function valuesOf(histogram: DenseHistogram): number[] {
  return Array.from({ length: histogram.totalCount }, (_, i) => histogram.valueAtRank(i + 1));
}
