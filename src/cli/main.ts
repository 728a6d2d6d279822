#!/usr/bin/env node
import { run } from './program.js';

// `ttl-advisor report | head`: the reader went away; stop quietly instead of dying with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

process.exitCode = await run(process.argv);
