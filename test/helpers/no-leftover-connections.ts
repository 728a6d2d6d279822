import { afterAll } from 'vitest';

// The test workers run many files in one process (vitest.config.ts: isolate: false): a connection a file leaves
// open lives on into the files after it, where its traffic can be taken for theirs (it was, once: a socket's
// writes counted in another file's test). So a file that ends with a TCP connection still open fails, naming it.
// Closing is asynchronous for some clients (`quit()` waits for Redis's answer): they get a moment first.

interface Handle {
  constructor?: { name?: string };
  remotePort?: number;
  remoteAddress?: string;
  localPort?: number;
  destroyed?: boolean;
}

const openConnections = (): Handle[] =>
  (process as unknown as { _getActiveHandles(): Handle[] })
    ._getActiveHandles()
    .filter((h) => h?.constructor?.name === 'Socket' && h.remotePort !== undefined && !h.destroyed);

afterAll(async () => {
  for (let waited = 0; openConnections().length > 0 && waited < 2000; waited += 50) await new Promise((r) => setTimeout(r, 50));
  const left = openConnections();
  if (left.length > 0) {
    throw new Error(`this file left ${left.length} connection(s) open: ${left.map((h) => `${h.localPort} → ${h.remoteAddress}:${h.remotePort}`).join(', ')}`);
  }
});
