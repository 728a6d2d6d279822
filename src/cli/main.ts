#!/usr/bin/env node
import { run } from './program.js';

// How often a command started by a package manager checks that the process that started it is still there.
const PARENT_POLL_MS = 500;

let stopping = false;

/**
 * Stops the way SIGTERM stops the command: `watch` and `collect` stop listening, restore what they
 * changed and write what they hold; any other command ends at once (the signal's default action).
 * Once: a second SIGTERM is an operator's "now", and would cut the first one's cleanup short.
 */
function stopAsOnSigterm(): void {
  if (stopping) return;
  stopping = true;
  process.kill(process.pid, 'SIGTERM');
}

// `ttl-advisor report | head`: the reader went away; stop quietly instead of dying with a stack trace.
// A command that stops on SIGTERM stops that way, so that an orphaned `watch` whose output pipe closed
// still restores the notification setting and writes its last samples.
let readerGone = false;
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    if (process.listenerCount('SIGTERM') === 0) process.exit(process.exitCode ?? 0);
    readerGone = true;
    stopAsOnSigterm();
  });
}

// `npx ttl-advisor watch` runs under `npm exec` and `sh -c`; a SIGTERM to npm (a pod's, a supervisor's)
// ends npm and the shell but never reaches this process, which would run on, orphaned. Started by a
// package manager, a command follows its parent: once that is gone (this process was handed to
// another parent), it stops as on SIGTERM. Started directly (`exec`, the bin path, `nohup`), it is
// left alone. The timer never keeps the process alive.
if (process.env.npm_config_user_agent !== undefined || process.env.npm_lifecycle_event !== undefined) {
  const parent = process.ppid;
  const poll = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(poll);
    if (!readerGone) process.stderr.write(`ttl-advisor: the process that started it (pid ${parent}) is gone; stopping as on SIGTERM\n`);
    stopAsOnSigterm();
  }, PARENT_POLL_MS);
  poll.unref();
}

const code = await run(process.argv);
// The command is done: once stdout and stderr have drained, end, even if a client library still
// holds a socket to a Redis that never answers (it would keep the process alive for seconds).
await Promise.all([process.stdout, process.stderr].map((stream) => new Promise((resolve) => stream.write('', resolve))));
process.exit(code);
