import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { WriterInit } from './protocol.js';

// Built: the compiled thread.js beside this file. Run from TypeScript sources (the tests),
// the .ts is loaded through tsx, registered inside the thread (a worker does not inherit loader hooks).
const BUILT_THREAD = new URL('./thread.js', import.meta.url);
const SOURCE_THREAD = new URL('./thread.ts', import.meta.url);
const RUNNING_FROM_SOURCE = !existsSync(fileURLToPath(BUILT_THREAD)) && existsSync(fileURLToPath(SOURCE_THREAD));
const SOURCE_BOOTSTRAP = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(SOURCE_THREAD.href)}); });`;

/** Starts a recorder's writer thread: the one place that knows where its code lives. Throws when it cannot start. */
export function spawnWriterThread(init: WriterInit): Worker {
  return RUNNING_FROM_SOURCE
    ? new Worker(SOURCE_BOOTSTRAP, { eval: true, workerData: init })
    : new Worker(BUILT_THREAD, { workerData: init });
}
