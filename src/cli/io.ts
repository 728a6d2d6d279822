import { randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, chownSync, constants, accessSync, existsSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { TtlAdvisorError } from '../errors.js';
import type { GithubOutput } from '../report/annotations.js';

/** Where the CLI writes; tests pass their own. */
export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Whether stderr is a terminal (progress lines only then). */
  isTty: boolean;
  now: () => number;
}

export const processIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  isTty: Boolean(process.stderr.isTTY),
  now: () => Date.now(),
};

/**
 * Lines on stderr; progress updates in place on a terminal (one line that keeps
 * changing) and as lines in a log. Any other line first ends the line in place.
 */
export function lineWriter(io: Pick<Io, 'stderr' | 'isTty'>): { line(text: string): void; progress(text: string): void } {
  let inPlace = false;
  return {
    line(text) {
      io.stderr(`${inPlace ? '\r\u001b[2K' : ''}${text}\n`);
      inPlace = false;
    },
    progress(text) {
      if (!io.isTty) return void io.stderr(`${text}\n`);
      io.stderr(`\r\u001b[2K${text}`);
      inPlace = true;
    },
  };
}

/**
 * Writes a check in the format asked for (`check` and `check --code` alike):
 * for `github`, the annotations on stdout and the summary appended to
 * `$GITHUB_STEP_SUMMARY`, or after them on stdout outside Actions; else the JSON
 * or the Markdown. Only the chosen format is rendered.
 */
export function writeCheckOutput(io: Io, format: 'md' | 'json' | 'github' | undefined, render: { github: () => GithubOutput; json: () => string; md: () => string }): void {
  if (format !== 'github') return void io.stdout(format === 'json' ? render.json() : render.md());
  const { annotations, summary } = render.github();
  const summaryFile = process.env.GITHUB_STEP_SUMMARY;
  if (summaryFile) appendFileSync(summaryFile, summary + '\n');
  io.stdout(annotations + (summaryFile ? '' : `\n${summary}`));
}

/**
 * The end of `apply` and `apply --code`, after the diff and the lines: the files
 * written (each atomically) and named by `name`, or, on a dry run, that nothing was.
 */
export function writeApplied(io: Io, dryRun: boolean | undefined, files: ReadonlyMap<string, string>, name: (path: string) => string): void {
  if (dryRun) return void io.stdout('(dry run: nothing written)\n');
  for (const [path, content] of files) writeFileAtomic(path, content);
  io.stdout(`wrote ${[...files.keys()].map(name).join(', ')}\n`);
}

/** What a run ends with, set by the actions: 0 fine, 1 findings that need action. */
export interface RunState {
  exitCode: number;
}

/**
 * Replaces a file by writing a temporary sibling and renaming it: readers never
 * see half a file. A symlink is written through (its target is replaced, the
 * link stays); the file keeps its mode and, where allowed, its owner; a file
 * the user could not write (no write bit, or no write access) is refused and left as it is.
 */
export function writeFileAtomic(path: string, content: string): void {
  const target = existsSync(path) ? realpathSync(path) : path;
  const before = existsSync(target) ? statSync(target) : undefined;
  if (before && ((before.mode & 0o222) === 0 || !canWrite(target))) {
    throw new TtlAdvisorError(`${path} is read-only; left unchanged`);
  }
  const temp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    writeFileSync(temp, content, { mode: before ? before.mode & 0o7777 : 0o644 });
    if (before) {
      chmodSync(temp, before.mode & 0o7777); // the umask must not widen or narrow it
      try {
        chownSync(temp, before.uid, before.gid);
      } catch {
        // only root may give a file away; a user's own file is theirs already
      }
    }
    renameSync(temp, target);
  } finally {
    rmSync(temp, { force: true });
  }
}

function canWrite(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
