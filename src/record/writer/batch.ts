import { NUMBERS_PER_SAMPLE, type EncodedBatch } from '../../store/input.js';
import { toMicros } from '../../units.js';
import { OUTCOME_CODE, type LockSample } from '../sample.js';

/** The buffers to transfer with a batch. */
export function transferList(batch: EncodedBatch): ArrayBuffer[] {
  return [batch.numbers.buffer as ArrayBuffer, batch.flags.buffer as ArrayBuffer, batch.keyLengths.buffer as ArrayBuffer];
}

/**
 * Encodes `samples[from, to)`. Samples without a string key, a known outcome or
 * a finite `at` are skipped; the result says how many.
 */
export function encodeBatch(samples: readonly LockSample[], from: number, to: number): { batch: EncodedBatch; invalid: number } {
  const capacity = to - from;
  const numbers = new Float64Array(capacity * NUMBERS_PER_SAMPLE);
  const flags = new Uint8Array(capacity);
  const keyLengths = new Uint32Array(capacity);
  const keys: string[] = [];
  const patterns: [number, string][] = [];
  const instances: [number, string][] = [];
  let count = 0;
  let invalid = 0;
  for (let i = from; i < to; i++) {
    const s = samples[i];
    if (s === null || typeof s !== 'object') {
      invalid++;
      continue;
    }
    const outcome = typeof s.outcome === 'string' && Object.hasOwn(OUTCOME_CODE, s.outcome) ? OUTCOME_CODE[s.outcome] : -1;
    if (typeof s.key !== 'string' || outcome < 0 || typeof s.at !== 'number' || !Number.isFinite(s.at)) {
      invalid++;
      continue;
    }
    const o = count * NUMBERS_PER_SAMPLE;
    numbers[o] = Math.round(s.at);
    numbers[o + 1] = s.holdMs === undefined || s.holdMs === null ? -1 : toMicros(s.holdMs);
    numbers[o + 2] = toMicros(s.waitMs ?? 0);
    numbers[o + 3] = nonNegativeInteger(s.ttlMs);
    numbers[o + 4] = Math.min(1 << 20, nonNegativeInteger(s.attempts ?? 1));
    numbers[o + 5] = Math.min(1 << 30, nonNegativeInteger(s.extensions ?? 0));
    flags[count] = outcome | (s.threw ? 8 : 0);
    keyLengths[count] = s.key.length;
    keys.push(s.key);
    if (typeof s.pattern === 'string' && s.pattern !== '') patterns.push([count, s.pattern]);
    if (typeof s.instance === 'string' && s.instance !== '') instances.push([count, s.instance]);
    count++;
  }
  return { batch: { count, numbers, flags, keys: keys.join(''), keyLengths, patterns, instances }, invalid };
}

function nonNegativeInteger(value: unknown): number {
  const n = Math.round(Number(value));
  return Number.isFinite(n) && n > 0 ? n : 0;
}
