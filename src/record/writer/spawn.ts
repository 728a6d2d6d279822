import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { WriterInit } from './protocol.js';

// Where the thread's code is, in the one place that needs to know:
// - the ES module build: thread.js beside this file;
// - the CommonJS bundle (dist/cjs/index.js, where import.meta.url is the bundle's): the ES module
//   build's thread, which a worker runs as an ES module whichever way its host was loaded;
// - the TypeScript sources (the tests): thread.ts through tsx, registered inside the thread
//   (a worker does not inherit loader hooks).
const BUILT_THREAD = [new URL('./thread.js', import.meta.url), new URL('../record/writer/thread.js', import.meta.url)].find((url) =>
  existsSync(fileURLToPath(url)),
);
const SOURCE_THREAD = new URL('./thread.ts', import.meta.url);
const RUNNING_FROM_SOURCE = BUILT_THREAD === undefined && existsSync(fileURLToPath(SOURCE_THREAD));
const SOURCE_BOOTSTRAP = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(SOURCE_THREAD.href)}); });`;

/** Starts a recorder's writer thread: the one place that knows where its code lives. Throws when it cannot start. */
export function spawnWriterThread(init: WriterInit): Worker {
  if (RUNNING_FROM_SOURCE) return new Worker(SOURCE_BOOTSTRAP, { eval: true, workerData: init });
  if (!BUILT_THREAD) throw new Error(`the writer thread's code is missing beside ${fileURLToPath(import.meta.url)}`);
  return new Worker(BUILT_THREAD, { workerData: init });
}
