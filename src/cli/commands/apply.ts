import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { applyRecommendations, DEFAULT_APPLY_MIN_CHANGE_PERCENT, DEFAULT_APPLY_MIN_WINDOW_MS } from '../../policy/apply.js';
import { unifiedDiff } from '../../policy/diff.js';
import { DEFAULT_POLICY_PATH, formatPolicy, loadTtlPolicy, parsePolicy } from '../../policy/policy.js';
import { holdReasonText } from '../../report/decision-text.js';
import { warningSentences } from '../../report/hint-text.js';
import { printable } from '../../text.js';
import { formatMs } from '../../units.js';
import { addAnalysisOptions, decisionOptionsOf, minWindowOption, nonNegativeNumber, runAnalysis, type AnalysisOptions, type DecisionFlags } from '../args.js';
import { runApplyCode } from '../code.js';
import { writeFileAtomic, type Io } from '../io.js';

interface ApplyCommandOptions extends AnalysisOptions, DecisionFlags {
  policy: string;
  dryRun?: boolean;
  code?: string[] | boolean;
}

/** `ttl-advisor apply`: writes the recommendations into the policy file and prints the diff. */
export function registerApply(program: Command, io: Io): void {
  addAnalysisOptions(
    program
      .command('apply')
      .description('Write the recommended TTLs into the policy file (pinned entries untouched) and print the diff.'),
  )
    .option('--policy <file>', 'the TTL policy file', DEFAULT_POLICY_PATH)
    .option('--dry-run', 'print the diff without writing')
    .addOption(minWindowOption('move no TTL on a pattern whose data spans less than this', DEFAULT_APPLY_MIN_WINDOW_MS))
    .option('--min-change <percent>', 'leave TTLs alone whose recommendation differs by less than this', nonNegativeNumber('--min-change'), DEFAULT_APPLY_MIN_CHANGE_PERCENT)
    .option('--code [glob...]', 'edit the lock TTLs in TypeScript/JavaScript source instead (default: the git-tracked files); see docs/code.md')
    .action(async (options: ApplyCommandOptions) => {
      if (options.code !== undefined) return runApplyCode({ ...options, code: options.code }, io);
      const policy = loadTtlPolicy(options.policy);
      const before = readFileSync(options.policy, 'utf8');
      const analysis = await runAnalysis(options, io);
      for (const warning of warningSentences(analysis)) io.stderr(`warning: ${warning}\n`);
      const { document, changes, skipped } = applyRecommendations(analysis, policy, decisionOptionsOf(options));
      // Every recommendation left out, and why: "no changes" must not read as "the data agrees".
      // Too little data makes no recommendation: no number is shown for it.
      const skips = skipped
        .map((s) => {
          const from = s.fromMs === undefined ? 'not in the file' : formatMs(s.fromMs);
          return `skipped ${printable(s.pattern)} (${s.noRecommendation ? from : `${from} → ${formatMs(s.toMs)}`}): ${holdReasonText(s.why, printable)}\n`;
        })
        .join('') +
        // Patterns watch saw only expire have no hold times: nothing to write, and said so.
        analysis.unconfirmed.map((u) => `skipped ${printable(u.pattern)}: expired, never released — no hold times to advise from (see the report)\n`).join('');
      if (changes.length === 0) {
        io.stdout(
          skips === ''
            ? `${options.policy}: no changes; every TTL matches the data.\n`
            : `${options.policy}: no changes; ${skipped.length + analysis.unconfirmed.length} recommendation(s) left out:\n${skips}`,
        );
        return;
      }
      const after = formatPolicy(document);
      // What is written must load: checked against the same rules as any policy file.
      parsePolicy(after, options.policy);
      // Named from the working directory (a repository's root, in CI), so `git apply` takes the diff as printed.
      const relativeName = relative(process.cwd(), resolve(options.policy));
      io.stdout(unifiedDiff(before, after, relativeName.startsWith('..') || isAbsolute(relativeName) ? options.policy : relativeName));
      for (const c of changes) {
        io.stdout(`${c.fromMs === undefined ? 'added' : 'changed'} ${c.pattern}: ${c.fromMs === undefined ? '' : `${formatMs(c.fromMs)} → `}${formatMs(c.toMs)}\n`);
      }
      io.stdout(skips);
      if (options.dryRun) {
        io.stdout('(dry run: nothing written)\n');
        return;
      }
      writeFileAtomic(options.policy, after);
      io.stdout(`wrote ${options.policy}\n`);
    });
}
