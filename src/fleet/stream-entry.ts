import { hasLeasePart, isReadableRollup } from '../store/histogram/codec.js';
import type { DeltaBatch, FoldedRollup } from '../store/input.js';

/**
 * One batch a `RedisStreamSink` sends: an instance's rollup deltas since its
 * previous batch, plus sampled raw rows. `(instance, epoch, seq)` identifies
 * it, so a collector applies it exactly once however often it is delivered.
 * `epoch` is random per sink, so a restarted process never reuses a sequence.
 */
export type StreamBatch = DeltaBatch & { epoch: string; seq: number };

/**
 * The entry format's version: `2` when a rollup's blob carries a lease part (renewed locks, schema 9),
 * which collectors before it cannot read — they refuse the entry by its version, saying so, rather
 * than calling its histograms malformed; `1` otherwise, so that a fleet without leases is read by
 * collectors old and new alike. Collectors read both.
 */
export const STREAM_ENTRY_VERSION = '2';
const READABLE_VERSIONS: ReadonlySet<string | undefined> = new Set(['1', '2']);

/** The entry's fields for XADD: `v`, `instance`, `epoch`, `seq`, `data` (JSON). */
export function encodeStreamBatch(batch: StreamBatch): string[] {
  const data = JSON.stringify({
    r: batch.rollups.map(({ pattern, bucketStartMs, values: v }) => [
      pattern,
      bucketStartMs,
      v[0],
      [v[1], v[2], v[3], v[4], v[13]],
      v[5],
      v[6],
      v[7],
      v[8],
      v[9],
      Buffer.from(v[10].buffer, v[10].byteOffset, v[10].byteLength).toString('base64'),
      v[11],
      v[12],
      v[14],
    ]),
    // The censored mark only when set: collectors older than it take nine fields at most.
    s: batch.raw.map((row) => (row[9] === 1 ? row : row.slice(0, 9))),
    ...(batch.counters ? { c: [batch.counters.recorded, batch.counters.dropped, batch.counters.rawDropped] } : {}),
    ...(batch.gaps?.length ? { g: batch.gaps } : {}),
    ...(batch.aliases?.length ? { a: batch.aliases } : {}),
  });
  const version = batch.rollups.some((r) => hasLeasePart(r.values[10])) ? STREAM_ENTRY_VERSION : '1';
  return ['v', version, 'instance', batch.instance, 'epoch', batch.epoch, 'seq', String(batch.seq), 'data', data];
}

/** Parses an entry's fields back; throws `TypeError` or `RangeError` on anything malformed. */
export function decodeStreamBatch(fields: readonly string[]): StreamBatch {
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i]!, fields[i + 1]!);
  if (!READABLE_VERSIONS.has(map.get('v'))) throw new TypeError(`unknown stream entry version ${JSON.stringify(map.get('v'))}`);
  const instance = map.get('instance');
  const epoch = map.get('epoch');
  const seq = Number(map.get('seq'));
  if (!instance || !epoch || !Number.isSafeInteger(seq)) throw new TypeError('stream entry without instance, epoch or seq');
  const data = JSON.parse(map.get('data') ?? 'null') as { r?: unknown[]; s?: unknown[]; c?: unknown; g?: unknown; a?: unknown } | null;
  if (!data || !Array.isArray(data.r) || !Array.isArray(data.s)) throw new TypeError('stream entry without rollups');
  const rollups = data.r.map((row) => {
    // Entries from sinks older than the extension counts end at `hists`: they had none.
    // Entries from sinks older than the unconfirmed count (2026-12) end at `extensions`.
    const [pattern, bucketStartMs, count, outcomes, threw, holdSumUs, waitSumUs, firstTsMs, lastTsMs, hists, extended = 0, extensions = 0, unconfirmed = 0] = row as [
      string, number, number, number[], number, number, number, number, number, string, number?, number?, number?,
    ];
    // Four outcomes from sinks older than `lost`, five since.
    if (typeof pattern !== 'string' || !Array.isArray(outcomes) || (outcomes.length !== 4 && outcomes.length !== 5) || typeof hists !== 'string') {
      throw new TypeError('malformed rollup in stream entry');
    }
    const [released, expired, notAcquired, error, lost] = [...outcomes, 0].slice(0, 5).map(num) as [number, number, number, number, number];
    const blob = Buffer.from(hists, 'base64');
    if (!isReadableRollup(blob)) throw new TypeError('malformed histograms in stream entry');
    const rollup: FoldedRollup = {
      pattern,
      bucketStartMs: num(bucketStartMs),
      values: [
        num(count), released, expired, notAcquired, error, num(threw), num(holdSumUs), num(waitSumUs),
        num(firstTsMs), num(lastTsMs), blob, num(extended), num(extensions), lost, num(unconfirmed),
      ],
    };
    return rollup;
  });
  const raw = data.s.map((row) => {
    // Rows from sinks older than `censored` (2026-12) have nine fields or fewer.
    if (!Array.isArray(row) || row.length < 7 || row.length > 10 || typeof row[1] !== 'string' || typeof row[2] !== 'string') {
      throw new TypeError('malformed raw sample in stream entry');
    }
    const censored = num(row[9] ?? 0) === 1 ? 1 : 0;
    return [num(row[0]), row[1], row[2], Number(row[3]), num(row[4]), num(row[5]), num(row[6]), num(row[7] ?? 0), num(row[8] ?? 0), censored] as StreamBatch['raw'][number];
  });
  // Counters came with sinks of 2026-12; older entries have none.
  let counters: StreamBatch['counters'];
  if (data.c !== undefined) {
    if (!Array.isArray(data.c) || data.c.length !== 3) throw new TypeError('malformed counters in stream entry');
    const [recorded, dropped, rawDropped] = data.c.map(num) as [number, number, number];
    counters = { recorded, dropped, rawDropped };
  }
  // Gaps in what the producer saw came with watchers of 2026-12; older entries have none.
  let gaps: StreamBatch['gaps'];
  if (data.g !== undefined) {
    if (!Array.isArray(data.g)) throw new TypeError('malformed gaps in stream entry');
    gaps = data.g.map((row) => {
      if (!Array.isArray(row) || row.length !== 5 || typeof row[0] !== 'string' || typeof row[3] !== 'string') throw new TypeError('malformed gap in stream entry');
      return [row[0], num(row[1]), num(row[2]), row[3], num(row[4])] as NonNullable<StreamBatch['gaps']>[number];
    });
  }
  // Renames of learned patterns came with sinks of 2026-12 (schema 11); older entries have none.
  let aliases: StreamBatch['aliases'];
  if (data.a !== undefined) {
    if (!Array.isArray(data.a)) throw new TypeError('malformed pattern aliases in stream entry');
    aliases = data.a.map((row) => {
      if (!Array.isArray(row) || row.length !== 3 || typeof row[0] !== 'string' || typeof row[1] !== 'string') throw new TypeError('malformed pattern alias in stream entry');
      return [row[0], row[1], num(row[2])] as NonNullable<StreamBatch['aliases']>[number];
    });
  }
  return { instance, epoch, seq, rollups, raw, ...(counters ? { counters } : {}), ...(gaps ? { gaps } : {}), ...(aliases ? { aliases } : {}) };
}

function num(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new TypeError('non-numeric field in stream entry');
  return value;
}
