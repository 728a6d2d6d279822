import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startChild, type Child } from './child.js';

const cli = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** `ttl-advisor watch --redis <url> --db <db> …more`, from source, in a child process tracked in `running`. */
export function startWatch(url: string, db: string, running: ChildProcess[], ...more: string[]): Child {
  return startChild(process.execPath, ['--import', 'tsx', cli, 'watch', '--redis', url, '--db', db, ...more], running);
}
