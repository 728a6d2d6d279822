import type { DeltaBatch } from '../store/input.js';
import { encodeStreamBatch, type StreamBatch } from './stream-entry.js';

/** A batch ready to send: the entry's fields, and how many samples its rollups count. */
export interface SealedBatch {
  batch: StreamBatch;
  fields: string[];
  samples: number;
}

/**
 * Raw rows per entry are cut at about this many bytes of keys: 6,000 keys of
 * 100 KB made one JSON string longer than V8 allows, and the sink's timer threw.
 */
export const MAX_RAW_BYTES_PER_ENTRY = 4 * 1024 * 1024;

/**
 * Turns what a sink's aggregator sealed into stream entries: each gets the
 * sink's epoch and the next sequence number (so a collector applies it exactly
 * once), and raw rows are split so that no entry grows too large. Never
 * throws: a batch that still cannot be encoded is counted in `lost` (samples)
 * and `rawLost` (rows) and left out.
 */
export class StreamBatcher {
  private seq = 0;

  constructor(private readonly epoch: string) {}

  entries(sealed: readonly DeltaBatch[], counters?: DeltaBatch['counters'], own?: string): { batches: SealedBatch[]; lost: number; rawLost: number } {
    const batches: SealedBatch[] = [];
    let lost = 0;
    let rawLost = 0;
    for (const { instance, rollups, raw } of sealed) {
      const samples = rollups.reduce((sum, r) => sum + r.values[0], 0);
      // The rollups travel with the first chunk of raw rows; later chunks carry raw rows only.
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
        const counted = i === 0 ? samples : 0;
        try {
          batches.push({ batch, fields: encodeStreamBatch(batch), samples: counted });
        } catch {
          lost += counted;
          rawLost += chunk.length;
        }
      });
    }
    return { batches, lost, rawLost };
  }
}
