import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { FromWriter, WriterData, WriterInit, WriterWarning } from './protocol.js';

// Where the thread's code is, in the one place that needs to know:
// - the ES module build: thread.js beside this file;
// - the CommonJS build (dist/cjs/, one file per source file, import.meta.url defined as the file's
//   own URL): its thread.js beside this file too;
// - a CommonJS bundle at dist/cjs/index.js (import.meta.url the bundle's): the ES module build's thread;
// - the TypeScript sources (the tests): the plain-JavaScript copy of thread.ts that the test run transpiles
//   at its start and names in TTL_ADVISOR_SOURCE_THREAD (starting through tsx costs a thread about four
//   times the CPU, and the tests start hundreds), else thread.ts through tsx, registered inside the thread
//   (a worker does not inherit loader hooks).
const BUILT_THREAD = [new URL('./thread.js', import.meta.url), new URL('../record/writer/thread.js', import.meta.url)].find((url) =>
  existsSync(fileURLToPath(url)),
);
const SOURCE_THREAD = new URL('./thread.ts', import.meta.url);
const RUNNING_FROM_SOURCE = BUILT_THREAD === undefined && existsSync(fileURLToPath(SOURCE_THREAD));
const SOURCE_BOOTSTRAP = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(SOURCE_THREAD.href)}); });`;

/** What the recorder hears from its writer thread. */
export interface WriterListeners {
  onMessage(message: FromWriter): void;
  onError(error: Error): void;
  onExit(): void;
}

/**
 * Starts a recorder's writer thread, the one place that knows where its code
 * lives, with the recorder's listeners. The thread never keeps the process
 * alive: whoever waits for it (`flush()`, `close()`) holds a timer of its own.
 * Throws when it cannot start.
 */
export function spawnWriterThread(init: WriterInit, listeners: WriterListeners): Worker {
  let worker: Worker;
  // The thread's warnings come through a port of their own, which `deliverWarnings` can empty at once: one the
  // thread sent just before it counted a drop would otherwise be lost when the recorder ends the thread.
  const { port1: warnings, port2 } = new MessageChannel();
  const options = { workerData: { ...init, warnings: port2 } satisfies WriterData, transferList: [port2] };
  const transpiled = RUNNING_FROM_SOURCE ? process.env.TTL_ADVISOR_SOURCE_THREAD : undefined;
  if (transpiled) worker = new Worker(new URL(transpiled), options);
  else if (RUNNING_FROM_SOURCE) worker = new Worker(SOURCE_BOOTSTRAP, { eval: true, ...options });
  else if (BUILT_THREAD) worker = new Worker(BUILT_THREAD, options);
  else {
    warnings.close();
    throw new Error(`the writer thread's code is missing beside ${fileURLToPath(import.meta.url)}`);
  }
  worker.on('message', listeners.onMessage);
  worker.on('error', listeners.onError);
  worker.on('exit', listeners.onExit);
  const hear = (warning: WriterWarning) => listeners.onMessage({ type: 'warning', warning });
  warnings.on('message', hear);
  // After the listeners, not before: adding a 'message' listener refs the worker's message port
  // again, and a ref'd port kept every service that had written once alive until close().
  worker.unref();
  warnings.unref();
  ports.set(worker, { port: warnings, hear });
  return worker;
}

const ports = new WeakMap<Worker, { port: MessagePort; hear: (warning: WriterWarning) => void }>();

/** Hands the listeners every warning the thread sent and they have not heard yet, at once; then the port closes. */
export function deliverWarnings(worker: Worker): void {
  const entry = ports.get(worker);
  if (!entry) return;
  ports.delete(worker);
  for (let m = receiveMessageOnPort(entry.port); m !== undefined; m = receiveMessageOnPort(entry.port)) entry.hear(m.message as WriterWarning);
  entry.port.close();
}

/** Ends the thread, once every warning it sent has been heard. */
export function endWriterThread(worker: Worker): void {
  deliverWarnings(worker);
  void worker.terminate().catch(() => undefined);
}
