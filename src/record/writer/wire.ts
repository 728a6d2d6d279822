import type { DeltaBatch, FoldedRollup, GapRow, RawRow } from '../../store/input.js';
import { HISTS, ROLLUP_VALUE_COLUMNS, type RollupValues } from '../../store/rollup.js';
import type { SealedWrite } from './protocol.js';

/**
 * A seal in one ArrayBuffer, so that it moves to the writer thread by transfer,
 * not by copy: `postMessage` cloned each batch's objects, raw rows and blobs one by
 * one, and each blob with the whole 8 KB pool slab under it. The thread reads the
 * blobs in place. Little-endian; numbers as float64, strings and blobs as a uint32
 * byte length and their (UTF-8) bytes; patterns and instances once per seal, as
 * indices after that. Only what a recorder's seal holds: no stream epochs or counters.
 *
 *   samples · rawRows · strings(n · string × n) · batches(n · batch × n)
 *   batch:  instance · rollups(n · (pattern · bucketStartMs · 14 values · hists) × n)
 *           · raw(n · (key · pattern · 8 numbers) × n) · gaps(n · (source · fromMs · toMs · reason · openHolds) × n)
 */

/** The rollup's values, as the store defines them: a column added there travels here too. */
const VALUES = ROLLUP_VALUE_COLUMNS.length;

/** Encodes a seal for {@link decodeSealedWrite} on the other side of a transfer. */
export function encodeSealedWrite(write: SealedWrite): ArrayBuffer {
  const names = new Map<string, number>();
  const nameOf = (name: string) => {
    let index = names.get(name);
    if (index === undefined) names.set(name, (index = names.size));
    return index;
  };
  let blobBytes = 0;
  for (const batch of write.batches) {
    nameOf(batch.instance);
    for (const rollup of batch.rollups) {
      nameOf(rollup.pattern);
      blobBytes += rollup.values[HISTS].length;
    }
    for (const row of batch.raw) nameOf(row[2]);
  }
  const rollups = write.batches.reduce((n, b) => n + b.rollups.length, 0);
  const out = new WireWriter(64 + blobBytes + rollups * 136 + write.rawRows * 120);
  out.f64(write.samples);
  out.f64(write.rawRows);
  out.u32(names.size);
  for (const name of names.keys()) out.str(name);
  out.u32(write.batches.length);
  for (const batch of write.batches) {
    out.u32(names.get(batch.instance)!);
    out.u32(batch.rollups.length);
    for (const { pattern, bucketStartMs, values } of batch.rollups) {
      out.u32(names.get(pattern)!);
      out.f64(bucketStartMs);
      for (let i = 0; i < VALUES; i++) if (i !== HISTS) out.f64((values[i] as number | undefined) ?? 0);
      out.blob(values[HISTS]);
    }
    out.u32(batch.raw.length);
    for (const row of batch.raw) {
      out.str(row[1]);
      out.u32(names.get(row[2])!);
      out.f64(row[0]);
      for (let i = 3; i < 10; i++) out.f64((row[i] as number | undefined) ?? 0);
    }
    const gaps = batch.gaps ?? [];
    out.u32(gaps.length);
    for (const [source, fromMs, toMs, reason, openHolds] of gaps) {
      out.str(source);
      out.f64(fromMs);
      out.f64(toMs);
      out.str(reason);
      out.f64(openHolds);
    }
  }
  return out.finish();
}

/** The seal {@link encodeSealedWrite} encoded; its blobs are views into `buffer`. */
export function decodeSealedWrite(buffer: ArrayBuffer): SealedWrite {
  const input = new WireReader(buffer);
  const samples = input.f64();
  const rawRows = input.f64();
  const names = Array.from({ length: input.u32() }, () => input.str());
  const batches: DeltaBatch[] = Array.from({ length: input.u32() }, () => {
    const instance = names[input.u32()]!;
    const rollups: FoldedRollup[] = Array.from({ length: input.u32() }, () => {
      const pattern = names[input.u32()]!;
      const bucketStartMs = input.f64();
      const values = new Array<unknown>(VALUES);
      for (let i = 0; i < VALUES; i++) if (i !== HISTS) values[i] = input.f64();
      values[HISTS] = input.blob();
      return { pattern, bucketStartMs, values: values as RollupValues };
    });
    const raw: RawRow[] = Array.from({ length: input.u32() }, () => {
      const key = input.str();
      const pattern = names[input.u32()]!;
      const tsMs = input.f64();
      return [tsMs, key, pattern, input.f64(), input.f64(), input.f64(), input.f64(), input.f64(), input.f64(), input.f64()];
    });
    const gaps: GapRow[] = Array.from({ length: input.u32() }, () => [input.str(), input.f64(), input.f64(), input.str(), input.f64()]);
    return gaps.length > 0 ? { instance, rollups, raw, gaps } : { instance, rollups, raw };
  });
  return { batches, samples, rawRows };
}

class WireWriter {
  private buffer: ArrayBuffer;
  private bytes: Buffer;
  private view: DataView;
  private at = 0;

  constructor(capacity: number) {
    this.buffer = new ArrayBuffer(capacity);
    this.bytes = Buffer.from(this.buffer);
    this.view = new DataView(this.buffer);
  }

  f64(value: number): void {
    this.room(8);
    this.view.setFloat64(this.at, value, true);
    this.at += 8;
  }

  u32(value: number): void {
    this.room(4);
    this.view.setUint32(this.at, value, true);
    this.at += 4;
  }

  str(value: string): void {
    this.room(4 + value.length * 3);
    const length = this.bytes.write(value, this.at + 4, 'utf8');
    this.view.setUint32(this.at, length, true);
    this.at += 4 + length;
  }

  blob(value: Uint8Array): void {
    this.room(4 + value.length);
    this.view.setUint32(this.at, value.length, true);
    this.bytes.set(value, this.at + 4);
    this.at += 4 + value.length;
  }

  /** The bytes written, in a buffer of their own (to be transferred). */
  finish(): ArrayBuffer {
    return this.at === this.buffer.byteLength ? this.buffer : this.buffer.slice(0, this.at);
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.byteLength) return;
    const bigger = new ArrayBuffer(Math.max(this.buffer.byteLength * 2, this.at + bytes));
    new Uint8Array(bigger).set(new Uint8Array(this.buffer, 0, this.at));
    this.buffer = bigger;
    this.bytes = Buffer.from(bigger);
    this.view = new DataView(bigger);
  }
}

class WireReader {
  private readonly bytes: Buffer;
  private readonly view: DataView;
  private at = 0;

  constructor(buffer: ArrayBuffer) {
    this.bytes = Buffer.from(buffer);
    this.view = new DataView(buffer);
  }

  f64(): number {
    const value = this.view.getFloat64(this.at, true);
    this.at += 8;
    return value;
  }

  u32(): number {
    const value = this.view.getUint32(this.at, true);
    this.at += 4;
    return value;
  }

  str(): string {
    const length = this.u32();
    const value = this.bytes.toString('utf8', this.at, this.at + length);
    this.at += length;
    return value;
  }

  /** A view, not a copy: the thread owns the transferred buffer. */
  blob(): Buffer {
    const length = this.u32();
    const value = this.bytes.subarray(this.at, this.at + length);
    this.at += length;
    return value;
  }
}
