import type { Command } from 'commander';
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, lstatSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { TtlAdvisorError } from '../../errors.js';
import { holdReasonText } from '../../report/decision-text.js';
import { applyRecommendations, DEFAULT_APPLY_MIN_WINDOW_MS } from '../../policy/apply.js';
import { DEFAULT_POLICY_PATH, formatPolicy, parsePolicy, TtlPolicy } from '../../policy/policy.js';
import { printable } from '../../text.js';
import { formatMs } from '../../units.js';
import { addAnalysisOptions, minWindowOption, runAnalysis, type AnalysisOptions } from '../args.js';
import type { Io } from '../io.js';

interface InitCommandOptions extends AnalysisOptions {
  policy: string;
  minWindow: number;
}

/** `ttl-advisor init`: the first policy file, from the data. */
export function registerInit(program: Command, io: Io): void {
  addAnalysisOptions(
    program
      .command('init')
      .description('Write a new TTL policy file from the data: one entry per pattern with enough evidence, the others listed with the reason.'),
  )
    .option('--policy <file>', 'the TTL policy file to create', DEFAULT_POLICY_PATH)
    .addOption(minWindowOption('leave out patterns whose data spans less than this', DEFAULT_APPLY_MIN_WINDOW_MS))
    .action(async (options: InitCommandOptions) => {
      refuseExisting(options.policy);
      const analysis = await runAnalysis(options, io);
      // The same evidence rules as apply, against an empty policy: every pattern is new.
      const { document, changes, skipped } = applyRecommendations(analysis, new TtlPolicy({ locks: {} }), {
        minChangePercent: 0,
        minWindowMs: options.minWindow,
      });
      const text = formatPolicy(document);
      parsePolicy(text, options.policy);
      createFile(options.policy, text);
      io.stdout(`wrote ${options.policy}: ${changes.length} pattern(s)\n`);
      for (const c of changes) io.stdout(`  ${printable(c.pattern)}: ${formatMs(c.toMs)}\n`);
      if (skipped.length + analysis.unconfirmed.length > 0) io.stdout(`left out ${skipped.length + analysis.unconfirmed.length} pattern(s), for now:\n`);
      // Patterns watch saw only expire have no hold times to start from: listed, not written.
      for (const u of analysis.unconfirmed) io.stdout(`  ${printable(u.pattern)} (no hold times): expired, never released — see the report\n`);
      for (const s of skipped) {
        // Too little data makes no recommendation: no number is shown for it.
        const recommended = s.noRecommendation ? 'no recommendation yet' : `${formatMs(s.toMs)} recommended`;
        io.stdout(`  ${printable(s.pattern)} (${recommended}): ${holdReasonText(s.why, printable)}\n`);
      }
    });
}

/**
 * init never overwrites, and a symbolic link is something to overwrite too: a
 * dangling one (`existsSync` says no) used to be replaced by a plain file.
 */
function refuseExisting(path: string): void {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (!stat) return;
  if (stat.isSymbolicLink() && !existsSync(path)) {
    throw new TtlAdvisorError(`${path} is a symbolic link to ${readlinkSync(path)}, which does not exist; init never replaces a link (create its target, or pass --policy <target>)`);
  }
  throw new TtlAdvisorError(`${path} exists already; ttl-advisor apply updates it`);
}

/**
 * Creates the file whole or not at all, and only if nothing is at its path by
 * then (the analysis took a while): written beside it, then hard-linked into
 * place, which fails on any existing entry, a dangling link included.
 */
function createFile(path: string, content: string): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    writeFileSync(temp, content, { flag: 'wx', mode: 0o644 });
    try {
      linkSync(temp, path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') refuseExisting(path);
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw error;
      writeFileSync(path, content, { flag: 'wx', mode: 0o644 }); // a file system without hard links
    }
  } catch (error) {
    if (error instanceof TtlAdvisorError) throw error;
    throw new TtlAdvisorError(`Cannot write ${path}: ${(error as Error).message}`);
  } finally {
    rmSync(temp, { force: true });
  }
}
