import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Analysis } from '../analyze/analyze.js';
import { ConfigError } from '../errors.js';
import { REPORTERS, type ReportFormat } from './index.js';

/**
 * Renders every requested format first, then writes each file to a temporary
 * name and renames it into place, so a failure leaves no half-written report.
 * Returns the paths written.
 */
export async function writeReports(analysis: Analysis, formats: readonly ReportFormat[], outDir: string): Promise<string[]> {
  const rendered: [string, string][] = [];
  for (const format of formats) rendered.push([REPORTERS[format].file, await REPORTERS[format].render(analysis)]);
  try {
    mkdirSync(outDir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') throw new ConfigError(`Cannot write reports into ${outDir}: it (or a folder on its way) is a file, not a directory`);
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') throw new ConfigError(`Cannot write reports into ${outDir}: not allowed (${code})`);
    throw error;
  }
  const written: string[] = [];
  const suffix = `.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    for (const [file, content] of rendered) writeFileSync(join(outDir, file + suffix), content);
    for (const [file] of rendered) {
      renameSync(join(outDir, file + suffix), join(outDir, file));
      written.push(join(outDir, file));
    }
  } finally {
    for (const [file] of rendered) rmSync(join(outDir, file + suffix), { force: true });
  }
  return written;
}
