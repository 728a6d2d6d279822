#!/usr/bin/env node
import { run } from './program.js';

// `ttl-advisor report | head`: the reader went away; stop quietly instead of dying with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const code = await run(process.argv);
// The command is done: once stdout and stderr have drained, end, even if a client library still
// holds a socket to a Redis that never answers (it would keep the process alive for seconds).
await Promise.all([process.stdout, process.stderr].map((stream) => new Promise((resolve) => stream.write('', resolve))));
process.exit(code);
