import type { ChildProcess } from 'node:child_process';
import { built } from './built.js';
import { startChild, type Child } from './child.js';

const cli = built('src/cli/main.ts');

/** `ttl-advisor watch --redis <url> --db <db> …more`, from source, in a child process tracked in `running`. */
export function startWatch(url: string, db: string, running: ChildProcess[], ...more: string[]): Child {
  return startChild(process.execPath, [cli, 'watch', '--redis', url, '--db', db, ...more], running);
}
