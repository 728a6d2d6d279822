import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteRecorder, type LockSample } from '../../src/index.js';
import { SealBuffers, decodeSealedWrite, encodeSealedWrite, releaseSealBuffer } from '../../src/record/writer/wire.js';
import type { SealedWrite } from '../../src/record/writer/protocol.js';
import { SCHEMA_VERSION } from '../../src/store/format.js';
import { queryDb, rollupTotal } from '../helpers/db.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
let n = 0;
const dbPath = () => join(dir, `ingest-${n++}.db`);
const START = Date.UTC(2026, 0, 1);
const sample = (i: number): LockSample => ({ key: `order:lock:product:${i % 100}`, at: START + i, holdMs: 1 + (i % 50), ttlMs: 10_000, outcome: 'released' });

/** Blocks this thread (its event loop too) until `done()` or `ms` pass: what a synchronous burst of `record()` calls does. */
function blockUntil(done: () => boolean, ms: number): boolean {
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() >= deadline) return false;
    Atomics.wait(sleeper, 0, 0, 20);
  }
  return true;
}

describe('ingest: the writer works while samples are recorded', () => {
  it('the first sample starts the writer, which opens (creates) the file before any seal', async () => {
    const path = dbPath();
    const idle = dbPath();
    const recorder = new SqliteRecorder({ path, flushIntervalMs: 60_000 });
    const control = new SqliteRecorder({ path: idle, flushIntervalMs: 60_000 });
    recorder.record(sample(0));
    const versionOf = (file: string) => {
      try {
        return existsSync(file) ? queryDb<{ user_version: number }>(file, 'PRAGMA user_version')[0]!.user_version : -1;
      } catch {
        return -1; // being created
      }
    };
    const deadline = Date.now() + 30_000;
    while (versionOf(path) !== SCHEMA_VERSION && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(versionOf(path)).toBe(SCHEMA_VERSION);
    expect(recorder.stats()).toMatchObject({ recorded: 1, written: 0, pending: 1 });
    // The control: a recorder that recorded nothing starts no thread and makes no file.
    expect(existsSync(idle)).toBe(false);
    expect(await recorder.close()).toMatchObject({ written: 1, dropped: 0 });
    await control.close();
  });

  it('a burst of samples on one event-loop turn is sealed and written as it is recorded, by volume, not at close', async () => {
    const burst = new SqliteRecorder({ path: dbPath(), flushIntervalMs: 60_000 });
    for (let i = 0; i < 300_000; i++) burst.record(sample(i));
    // The event loop has not turned: only seals sent during the burst can have been written.
    expect(blockUntil(() => burst.stats().written > 0, 60_000)).toBe(true);
    expect(await burst.close()).toMatchObject({ recorded: 300_000, written: 300_000, dropped: 0 });

    // The control: below the volume, nothing is sealed until the timer, a flush or close.
    const path = dbPath();
    const few = new SqliteRecorder({ path, flushIntervalMs: 60_000 });
    for (let i = 0; i < 1000; i++) few.record(sample(i));
    expect(blockUntil(() => few.stats().written > 0, 1500)).toBe(false);
    expect(await few.close()).toMatchObject({ written: 1000, dropped: 0 });
    expect(rollupTotal(path)).toBe(1000);
  });
});

describe('the wire format of a seal (transferred to the writer thread)', () => {
  it('decodes to the seal it encoded: rollups with their blobs, raw rows, gaps, several instances', () => {
    const hists = (bytes: number[]) => Buffer.from(bytes);
    const write: SealedWrite = {
      samples: 12,
      rawRows: 2,
      batches: [
        {
          instance: 'api-1',
          rollups: [
            { pattern: 'order:lock:{id}', bucketStartMs: START, values: [10, 9, 1, 0, 0, 2, 12_345, 67, START + 5, START + 999, hists([1, 2, 3, 255]), 1, 3, 0, 0] },
            { pattern: 'mail:lock:ü🔒', bucketStartMs: START + 3_600_000, values: [2, 2, 0, 0, 0, 0, 1.5e12, 0, START, START, hists([]), 0, 0, 1, 2] },
          ],
          raw: [
            [START + 5, 'order:lock:42', 'order:lock:{id}', 1234, -1, 10_000, 9, 2, 0, 1],
            [START + 6, 'mail:lock:ü🔒', 'mail:lock:ü🔒', -1, 0, 5000, 2 | (3 << 3), 0, 1, 0],
          ],
          gaps: [['redis:6379', START, START + 10, 'connection-lost', 4]],
        },
        { instance: 'other', rollups: [{ pattern: 'order:lock:{id}', bucketStartMs: START, values: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, hists([9]), 0, 0, 0, 0] }], raw: [] },
      ],
    };
    const wire = encodeSealedWrite(write);
    const moved = structuredClone(wire, { transfer: [wire] });
    expect(wire.byteLength).toBe(0); // transferred, not copied
    expect(decodeSealedWrite(moved)).toEqual(write);
  });

  it('reuses a shared buffer once the writer frees it, never one it still holds; a new thread frees them all', () => {
    const seal = (i: number, raw = 1): SealedWrite => ({
      samples: i,
      rawRows: raw,
      batches: [
        {
          instance: `api-${i}`,
          rollups: [{ pattern: 'order:lock:{id}', bucketStartMs: START, values: [i, i, 0, 0, 0, 0, i, 0, START, START, Buffer.from([i, 1, 2]), 0, 0, 0, 0] }],
          raw: Array.from({ length: raw }, (_, r): SealedWrite['batches'][number]['raw'][number] => [START + r, `order:lock:${i}:${r}`, 'order:lock:{id}', i, 0, 10_000, 0, 0, 0, 0]),
        },
      ],
    });
    const buffers = new SealBuffers();
    const thread = {};
    const first = buffers.encode(seal(1), thread);
    expect(first).toBeInstanceOf(SharedArrayBuffer);
    // Held by the writer: the next seals go elsewhere and leave it as it was.
    const second = buffers.encode(seal(2), thread);
    const third = buffers.encode(seal(3), thread);
    expect(new Set([first, second, third]).size).toBe(3);
    // All kept buffers held: a buffer of its own, to be transferred.
    const fourth = buffers.encode(seal(4), thread);
    expect(fourth).toBeInstanceOf(ArrayBuffer);
    expect([first, second, third, fourth].map((wire) => decodeSealedWrite(wire))).toEqual([seal(1), seal(2), seal(3), seal(4)]);
    releaseSealBuffer(second);
    expect(buffers.encode(seal(5), thread)).toBe(second);
    expect(decodeSealedWrite(first)).toEqual(seal(1));
    // A seal larger than the kept buffer: a bigger one is kept in its place.
    releaseSealBuffer(first);
    const grown = buffers.encode(seal(6, 20_000), thread);
    expect(grown).toBeInstanceOf(SharedArrayBuffer);
    expect(grown.byteLength).toBeGreaterThan(first.byteLength);
    expect(decodeSealedWrite(grown)).toEqual(seal(6, 20_000));
    // A seal too large to keep goes in a buffer of its own.
    expect(buffers.encode(seal(7, 60_000), thread)).toBeInstanceOf(ArrayBuffer);
    // A new thread (the last one ended): what the old one held is free again.
    expect(buffers.encode(seal(8), {})).toBeInstanceOf(SharedArrayBuffer);
  });
});
