import type { AliasRow, DeltaBatch, FoldedRollup, GapRow, RawRow } from '../../store/input.js';
import { HISTS, ROLLUP_VALUE_COLUMNS, type RollupValues } from '../../store/rollup.js';
import type { SealedWrite } from './protocol.js';

/**
 * A seal in one buffer, so that it reaches the writer thread without a copy: a
 * SharedArrayBuffer reused from seal to seal (see {@link SealBuffers}), or an
 * ArrayBuffer that is transferred. `postMessage` cloned each batch's objects, raw
 * rows and blobs one by one, and each blob with the whole 8 KB pool slab under it.
 * The thread reads the blobs in place. Little-endian; numbers as float64, strings
 * and blobs as a uint32 byte length and their (UTF-8) bytes; patterns and instances
 * once per seal, as indices after that. Only what a recorder's seal holds: no stream epochs or counters.
 *
 * The first 8 bytes are the buffer's own (see {@link SealBuffers}), the seal follows:
 *
 *   samples · rawRows · strings(n · string × n) · batches(n · batch × n)
 *   batch:  instance · rollups(n · (pattern · bucketStartMs · 14 values · hists) × n)
 *           · raw(n · (key · pattern · 8 numbers) × n) · gaps(n · (source · fromMs · toMs · reason · openHolds) × n)
 *           · aliases(n · (from · to · distinct) × n)
 */

/** The rollup's values, as the store defines them: a column added there travels here too. */
const VALUES = ROLLUP_VALUE_COLUMNS.length;

/** Where the seal starts: before it, the state of a shared buffer (see {@link SealBuffers}). */
const SEAL_START = 8;
/** A buffer's state: the writer thread holds it from the post until it is done with the seal in it. */
const HELD = 1;
const FREE = 0;
/** Shared buffers kept for seals: the seals in flight (at most two, see `SqliteRecorder`) and the final one. */
const SLOTS = 3;
/** A larger seal (a burst of raw rows, thousands of pattern-hours) goes in a buffer of its own, not kept. */
const MAX_KEPT_BYTES = 4 * 1024 * 1024;

/**
 * The buffers seals are encoded into, reused from seal to seal: a fresh buffer
 * for every seal (and one more for its exact-size copy) cost the recording thread
 * more than the encoding, in first writes to new memory. A buffer is shared with
 * the writer thread, which marks it free once it is done with its seal (written,
 * dropped or abandoned); no message comes back, so buffers are free again even
 * while a synchronous burst of `record()` keeps this thread's event loop from
 * running. A seal finding no free buffer, or too large to keep, is encoded into a
 * buffer of its own that is transferred, as before.
 */
export class SealBuffers {
  private readonly kept: SharedArrayBuffer[] = [];
  private thread: object | undefined;

  /**
   * Encodes `write` for {@link decodeSealedWrite}, to be posted to `thread`: into a kept buffer, held by
   * the thread until it frees it, or a new one. A thread replaces another only once that one has ended:
   * then the buffers it held are free (it will never free them).
   */
  encode(write: SealedWrite, thread: object): SharedArrayBuffer | ArrayBuffer {
    if (thread !== this.thread) {
      for (const buffer of this.kept) Atomics.store(new Int32Array(buffer, 0, 1), 0, FREE);
      this.thread = thread;
    }
    const bytes = capacityFor(write);
    if (bytes > MAX_KEPT_BYTES) return encodeSealedWrite(write);
    let slot = this.kept.findIndex((buffer) => Atomics.load(new Int32Array(buffer, 0, 1), 0) === FREE);
    if (slot < 0 && this.kept.length < SLOTS) slot = this.kept.push(new SharedArrayBuffer(bytes)) - 1;
    if (slot < 0) return encodeSealedWrite(write);
    if (this.kept[slot]!.byteLength < bytes) this.kept[slot] = new SharedArrayBuffer(Math.min(MAX_KEPT_BYTES, Math.max(bytes, this.kept[slot]!.byteLength * 2)));
    const buffer = writeSeal(write, new WireWriter(this.kept[slot]!, (size) => (size <= MAX_KEPT_BYTES ? new SharedArrayBuffer(size) : new ArrayBuffer(size))));
    // Outgrown while written (long UTF-8 strings): the bigger buffer is kept instead, when it is shared.
    if (buffer instanceof SharedArrayBuffer) {
      this.kept[slot] = buffer;
      Atomics.store(new Int32Array(buffer, 0, 1), 0, HELD);
    }
    return buffer;
  }
}

/** The writer thread is done with the seal in `wire`: a kept buffer may take the next seal. */
export function releaseSealBuffer(wire: SharedArrayBuffer | ArrayBuffer): void {
  if (wire instanceof SharedArrayBuffer) Atomics.store(new Int32Array(wire, 0, 1), 0, FREE);
}

/** Bytes a seal needs, about (strings beyond ASCII grow the buffer while written). */
function capacityFor(write: SealedWrite): number {
  let bytes = SEAL_START + 64;
  for (const batch of write.batches) {
    bytes += 8 + batch.instance.length * 3;
    for (const rollup of batch.rollups) bytes += 136 + rollup.pattern.length + rollup.values[HISTS].length;
    bytes += batch.raw.length * 120 + (batch.gaps?.length ?? 0) * 128;
    for (const [from, to] of batch.aliases ?? []) bytes += 16 + (from.length + to.length) * 3;
  }
  return bytes;
}

/** Encodes a seal for {@link decodeSealedWrite} into a buffer of its own, to be transferred. */
export function encodeSealedWrite(write: SealedWrite): ArrayBuffer {
  return writeSeal(write, new WireWriter(new ArrayBuffer(capacityFor(write)), (size) => new ArrayBuffer(size))) as ArrayBuffer;
}

function writeSeal(write: SealedWrite, out: WireWriter): SharedArrayBuffer | ArrayBuffer {
  const names = new Map<string, number>();
  const nameOf = (name: string) => {
    let index = names.get(name);
    if (index === undefined) names.set(name, (index = names.size));
    return index;
  };
  for (const batch of write.batches) {
    nameOf(batch.instance);
    for (const rollup of batch.rollups) nameOf(rollup.pattern);
    for (const row of batch.raw) nameOf(row[2]);
  }
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
    for (const row of batch.raw) out.raw(row, names.get(row[2])!);
    const gaps = batch.gaps ?? [];
    out.u32(gaps.length);
    for (const [source, fromMs, toMs, reason, openHolds] of gaps) {
      out.str(source);
      out.f64(fromMs);
      out.f64(toMs);
      out.str(reason);
      out.f64(openHolds);
    }
    const aliases = batch.aliases ?? [];
    out.u32(aliases.length);
    for (const [from, to, distinct] of aliases) {
      out.str(from);
      out.str(to);
      out.f64(distinct);
    }
  }
  return out.finish();
}

/** The seal {@link encodeSealedWrite} or {@link SealBuffers} encoded; its blobs are views into `buffer`. */
export function decodeSealedWrite(buffer: SharedArrayBuffer | ArrayBuffer): SealedWrite {
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
    const aliases: AliasRow[] = Array.from({ length: input.u32() }, () => [input.str(), input.str(), input.f64()]);
    const batch: DeltaBatch = { instance, rollups, raw };
    if (gaps.length > 0) batch.gaps = gaps;
    if (aliases.length > 0) batch.aliases = aliases;
    return batch;
  });
  return { batches, samples, rawRows };
}

class WireWriter {
  private bytes: Buffer;
  private view: DataView;
  private at = SEAL_START;

  constructor(
    private buffer: SharedArrayBuffer | ArrayBuffer,
    private readonly grow: (bytes: number) => SharedArrayBuffer | ArrayBuffer,
  ) {
    this.bytes = Buffer.from(buffer);
    this.view = new DataView(buffer);
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

  /**
   * A raw row: key · pattern · tsMs and the 7 numbers after the pattern. One bounds check for all:
   * a seal's thousands of rows are written by code that has barely run yet (a seal is rare), where each call counts.
   */
  raw(row: RawRow, pattern: number): void {
    const key = row[1];
    this.room(4 + key.length * 3 + 4 + 8 * 8);
    const length = this.bytes.write(key, this.at + 4, 'utf8');
    const view = this.view;
    view.setUint32(this.at, length, true);
    let at = this.at + 4 + length;
    view.setUint32(at, pattern, true);
    view.setFloat64(at + 4, row[0], true);
    at += 12;
    for (let i = 3; i < 10; i++, at += 8) view.setFloat64(at, (row[i] as number | undefined) ?? 0, true);
    this.at = at;
  }

  blob(value: Uint8Array): void {
    this.room(4 + value.length);
    this.view.setUint32(this.at, value.length, true);
    this.bytes.set(value, this.at + 4);
    this.at += 4 + value.length;
  }

  /** The buffer written: the seal is self-delimiting, so bytes past its end are left as they are (no copy of the exact size). */
  finish(): SharedArrayBuffer | ArrayBuffer {
    return this.buffer;
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.byteLength) return;
    const bigger = this.grow(Math.max(this.buffer.byteLength * 2, this.at + bytes));
    new Uint8Array(bigger).set(new Uint8Array(this.buffer, 0, this.at));
    this.buffer = bigger;
    this.bytes = Buffer.from(bigger);
    this.view = new DataView(bigger);
  }
}

class WireReader {
  private readonly bytes: Buffer;
  private readonly view: DataView;
  private at = SEAL_START;

  constructor(buffer: SharedArrayBuffer | ArrayBuffer) {
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

  /** A view, not a copy: the thread holds the buffer until it is done with the seal. */
  blob(): Buffer {
    const length = this.u32();
    const value = this.bytes.subarray(this.at, this.at + length);
    this.at += length;
    return value;
  }
}
