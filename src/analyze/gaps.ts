import type { Db } from '../store/db.js';
import { BUCKET_MS } from '../store/format.js';
import { schemaVersionOf } from '../store/schema.js';
import type { GapWithPatterns, Hint, ObservedGap } from './hints.js';

export type { GapWithPatterns, ObservedGap } from './hints.js';

/** The gaps of one database that touch the window, each with the patterns its instance recorded. */
export function readGaps(db: Db, fromBucket: number, toBucket: number): GapWithPatterns[] {
  if (schemaVersionOf(db) < 7) return [];
  const rows = db
    .prepare(
      `SELECT g.instance_id AS id, i.instance, g.source, g.from_ms AS fromMs, g.to_ms AS toMs, g.reason, g.open_holds AS openHolds
         FROM gaps g JOIN instances i ON i.id = g.instance_id WHERE g.to_ms >= ? AND g.from_ms < ? ORDER BY g.from_ms`,
    )
    .all(fromBucket, toBucket) as (ObservedGap & { id: number })[];
  const patternsOf = new Map<number, Set<string>>();
  const select = db.prepare('SELECT DISTINCT p.pattern FROM rollups r JOIN patterns p ON p.id = r.pattern_id WHERE r.instance_id = ?').pluck();
  return rows.map(({ id, ...gap }) => {
    let patterns = patternsOf.get(id);
    if (!patterns) patternsOf.set(id, (patterns = new Set(select.all(id) as string[])));
    return { ...gap, patterns };
  });
}

/** What {@link markIncompleteHours} reads and marks of a pattern's analysis. */
interface GapMarkable {
  pattern: string;
  incompleteHours: number;
  hints: Hint[];
  hourly: { hourStartMs: number; incomplete?: true }[];
}

/**
 * Marks what the gaps cut: each pattern's hours that a gap of an instance
 * recording it touches (its counts there are lower bounds, an hour with no
 * data at all included), and its hourly points in them.
 */
export function markIncompleteHours(patterns: readonly GapMarkable[], gaps: readonly GapWithPatterns[]): void {
  if (gaps.length === 0) return;
  for (const p of patterns) {
    const hours = new Set<number>();
    for (const gap of gaps) {
      if (!gap.patterns.has(p.pattern)) continue;
      for (let h = hourOf(gap.fromMs); h <= hourOf(gap.toMs); h += BUCKET_MS) hours.add(h);
    }
    if (hours.size === 0) continue;
    p.incompleteHours = hours.size;
    p.hints.push({ kind: 'incomplete', hours: hours.size });
    for (const point of p.hourly) if (hours.has(point.hourStartMs)) point.incomplete = true;
  }
}

function hourOf(ms: number): number {
  return ms - (((ms % BUCKET_MS) + BUCKET_MS) % BUCKET_MS);
}
