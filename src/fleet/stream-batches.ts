import { OVERFLOW_PATTERN, resolvePattern, type CompiledTemplate } from '../keys/pattern.js';
import { OUTCOME_CODE, type LockSample } from '../record/sample.js';
import { addSample, bucketStartOf, newDelta, type RollupDelta } from '../store/rollup.js';
import { toMicros } from '../units.js';
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
const KEY_CACHE_LIMIT = 10_000;

/**
 * Folds a sink's samples into stream batches: rollup deltas per (pattern, hour)
 * plus sampled raw rows, split so that no entry grows too large. Keeps the
 * key → pattern cache and the pattern cap. Never throws: a batch that still
 * cannot be encoded is counted in `lost` and left out.
 */
export class StreamBatcher {
  private seq = 0;
  private readonly keyPatterns = new Map<string, string>();
  private readonly knownPatterns = new Set<string>();
  /** Samples recorded as {other} because the pattern cap was reached. */
  patternOverflow = 0;

  constructor(
    private readonly instance: string,
    private readonly epoch: string,
    private readonly options: { rawSampleRate: number; maxPatterns: number; templates: readonly CompiledTemplate[] },
    private readonly onOverflow: () => void,
  ) {}

  /** Seals `samples` (already checked by `checkSample`); returns the batches and how many samples could not be sealed. */
  seal(samples: readonly LockSample[]): { batches: SealedBatch[]; lost: number } {
    // pattern → bucket → delta: pattern strings come from the key cache, so their hashes are cached too.
    const deltas = new Map<string, Map<number, RollupDelta<string, string>>>();
    const rollups: RollupDelta<string, string>[] = [];
    const rawChunks: StreamBatch['raw'][] = [[]];
    let rawBytes = 0;
    for (const s of samples) {
      const tsMs = Math.round(s.at);
      const holdUs = s.holdMs === undefined || s.holdMs === null ? -1 : toMicros(s.holdMs);
      const waitUs = toMicros(s.waitMs ?? 0);
      const ttlMs = Math.round(s.ttlMs);
      const attempts = Math.round(s.attempts ?? 1);
      const threw = s.threw ? 1 : 0;
      const extensions = Math.round(s.extensions ?? 0);
      const outcome = OUTCOME_CODE[s.outcome];
      const pattern = this.patternOf(s);
      const bucket = bucketStartOf(tsMs);
      let byBucket = deltas.get(pattern);
      if (!byBucket) deltas.set(pattern, (byBucket = new Map()));
      let delta = byBucket.get(bucket);
      if (!delta) {
        byBucket.set(bucket, (delta = newDelta(pattern, this.instance, bucket, tsMs)));
        rollups.push(delta);
      }
      addSample(delta, tsMs, holdUs, waitUs, ttlMs, outcome, threw, extensions);
      if (this.options.rawSampleRate >= 1 || Math.random() < this.options.rawSampleRate) {
        const bytes = 2 * (s.key.length + pattern.length) + 64;
        if (rawBytes + bytes > MAX_RAW_BYTES_PER_ENTRY && rawChunks.at(-1)!.length > 0) {
          rawChunks.push([]);
          rawBytes = 0;
        }
        rawBytes += bytes;
        // As stored: `lost` is outcome 1 with its own flag.
        const stored = outcome === 4 ? 1 : outcome;
        rawChunks.at(-1)!.push([tsMs, s.key, pattern, holdUs, waitUs, ttlMs, stored | (threw << 2) | (attempts * 8), extensions, outcome === 4 ? 1 : 0]);
      }
    }
    if (rollups.length === 0) return { batches: [], lost: 0 };
    // The rollups travel with the first chunk of raw rows; later chunks carry raw rows only.
    const batches: SealedBatch[] = [];
    let lost = 0;
    rawChunks.forEach((raw, i) => {
      const batch: StreamBatch = { instance: this.instance, epoch: this.epoch, seq: ++this.seq, rollups: i === 0 ? rollups : [], raw };
      const counted = i === 0 ? samples.length : 0;
      try {
        batches.push({ batch, fields: encodeStreamBatch(batch), samples: counted });
      } catch {
        lost += counted;
      }
    });
    return { batches, lost };
  }

  private patternOf(sample: LockSample): string {
    const explicit = sample.pattern;
    if (typeof explicit === 'string' && explicit !== '') return this.capped(explicit);
    // The cache holds the final pattern (after the cap), so a known key costs one lookup.
    const cached = this.keyPatterns.get(sample.key);
    if (cached !== undefined) {
      if (cached === OVERFLOW_PATTERN) this.patternOverflow++;
      return cached;
    }
    const pattern = this.capped(resolvePattern(sample.key, this.options.templates));
    if (this.keyPatterns.size >= KEY_CACHE_LIMIT) this.keyPatterns.clear();
    this.keyPatterns.set(sample.key, pattern);
    return pattern;
  }

  private capped(pattern: string): string {
    if (this.knownPatterns.has(pattern)) return pattern;
    if (this.knownPatterns.size >= this.options.maxPatterns) {
      this.patternOverflow++;
      this.onOverflow();
      return OVERFLOW_PATTERN;
    }
    this.knownPatterns.add(pattern);
    return pattern;
  }
}
