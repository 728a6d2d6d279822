import type { DeltaBatch } from '../store/input.js';
import { encodeStreamBatch, type StreamBatch } from './stream-entry.js';

/**
 * An entry waiting to be sent: the batch, how many samples its rollups count,
 * and its fields once encoded. Entries are encoded one at a time, just before
 * their XADD, so a seal of hundreds of megabytes of raw rows never blocks the
 * event loop for more than one entry's encoding.
 */
export interface SealedBatch {
  batch: StreamBatch;
  samples: number;
  fields?: string[];
}

/**
 * Raw rows per entry are cut at about this many bytes of keys: 6,000 keys of
 * 100 KB made one JSON string longer than V8 allows, and the sink's timer threw.
 * It also bounds the synchronous work of one encoding (a few milliseconds).
 */
export const MAX_RAW_BYTES_PER_ENTRY = 4 * 1024 * 1024;

/**
 * Turns what a sink's aggregator sealed into stream entries: each gets the
 * sink's epoch and the next sequence number (so a collector applies it exactly
 * once), and raw rows are split so that no entry grows too large. The rollups
 * (and the sink's counters) travel in the first entry of each instance; later
 * entries carry raw rows only. Splitting is a pass over the rows' lengths;
 * nothing is encoded here (see {@link encodeSealed}).
 */
export class StreamBatcher {
  private seq = 0;

  constructor(private readonly epoch: string) {}

  entries(sealed: readonly DeltaBatch[], counters?: DeltaBatch['counters'], own?: string): SealedBatch[] {
    const entries: SealedBatch[] = [];
    for (const { instance, rollups, raw, gaps, aliases } of sealed) {
      const samples = rollups.reduce((sum, r) => sum + r.values[0], 0);
      const chunks: DeltaBatch['raw'][] = [[]];
      let bytes = 0;
      for (const row of raw) {
        const size = 2 * (row[1].length + row[2].length) + 64;
        if (bytes + size > MAX_RAW_BYTES_PER_ENTRY && chunks.at(-1)!.length > 0) {
          chunks.push([]);
          bytes = 0;
        }
        bytes += size;
        chunks.at(-1)!.push(row);
      }
      chunks.forEach((chunk, i) => {
        const batch: StreamBatch = { instance, epoch: this.epoch, seq: ++this.seq, rollups: i === 0 ? rollups : [], raw: chunk };
        if (counters && instance === own && i === 0) batch.counters = counters;
        if (gaps && i === 0) batch.gaps = gaps;
        if (aliases && i === 0) batch.aliases = aliases;
        entries.push({ batch, samples: i === 0 ? samples : 0 });
      });
    }
    return entries;
  }
}

/** True when the entry carries statistics (rollups or the sink's counters), not raw rows alone. */
export function carriesStatistics(entry: SealedBatch): boolean {
  const { rollups, counters, gaps, aliases } = entry.batch;
  return rollups.length > 0 || counters !== undefined || (gaps?.length ?? 0) > 0 || (aliases?.length ?? 0) > 0;
}

/** The entry's XADD fields, encoded on first use; throws when the batch cannot be encoded. */
export function encodeSealed(entry: SealedBatch): string[] {
  return (entry.fields ??= encodeStreamBatch(entry.batch));
}
